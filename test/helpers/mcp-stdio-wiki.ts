/**
 * The test wiki's MCP server over stdio, as a stage starts one (`{ command, args }`); it appends
 * each call to MCP_CALLS_FILE (one JSON line), so the test can count what it was asked.
 */
import fs from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { wikiMcpServer } from './mcp-server';

const callsFile = process.env.MCP_CALLS_FILE;
const record = (call: { tool: string; key: unknown }) => {
  if (callsFile) fs.appendFileSync(callsFile, `${JSON.stringify(call)}\n`);
};
void wikiMcpServer(record, new Map()).connect(new StdioServerTransport());
