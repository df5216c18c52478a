/**
 * A real MCP server over streamable HTTP (the official SDK's server, stateless), started by a
 * test: `search` reads, `post_note` writes a note once per idempotency key (`_meta`), as a
 * system that honours the key would (a call without a key writes a note each time, as such a
 * system does with an unkeyed request); it counts every call and every note actually written.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { MCP_IDEMPOTENCY_META } from '../../src/agents/mcp';

export interface TestMcpServer {
  url: string;
  calls: { tool: string; key: unknown }[];
  /** Notes written, by idempotency key. */
  notes: Map<string, string>;
  /** Set by a test: awaited after a write is done and before its answer goes back (a response
   * held there is a write that reached the system while its caller waits). */
  afterWrite?: (key: string) => Promise<void>;
  close(): Promise<void>;
}

export async function startMcpServer(): Promise<TestMcpServer> {
  const handle: TestMcpServer = { url: '', calls: [], notes: new Map(), close: async () => undefined };
  const mcpServer = () =>
    wikiMcpServer(
      (call) => handle.calls.push(call),
      handle.notes,
      (key) => handle.afterWrite?.(key),
    );
  const httpServer = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      void (async () => {
        // Stateless: a server and transport per request, as the SDK's stateless example does.
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        const server = mcpServer();
        res.on('close', () => void transport.close().then(() => server.close()));
        await server.connect(transport);
        await transport.handleRequest(req, res, body ? (JSON.parse(body) as unknown) : undefined);
      })();
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  handle.url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/mcp`;
  handle.close = async () => {
    httpServer.closeAllConnections();
    await new Promise((resolve) => httpServer.close(resolve));
  };
  return handle;
}

/** The test wiki's MCP server: each call is told to `record`, each note written kept in `notes`
 * (then `afterWrite` awaited before the answer). */
export function wikiMcpServer(
  record: (call: TestMcpServer['calls'][number]) => void,
  notes: TestMcpServer['notes'],
  afterWrite?: (key: string) => Promise<void> | undefined,
): McpServer {
  const server = new McpServer({ name: 'handrail-test-wiki', version: '1.0.0' });
  server.registerTool(
    'search',
    { description: 'Finds one fact about a topic', inputSchema: { topic: z.string() } },
    async ({ topic }, extra) => {
      record({ tool: 'search', key: extra._meta?.[MCP_IDEMPOTENCY_META] });
      return { content: [{ type: 'text', text: `${topic}: refunds within 30 days` }] };
    },
  );
  server.registerTool(
    'post_note',
    { description: 'Posts a note to the wiki', inputSchema: { text: z.string() } },
    async ({ text }, extra) => {
      const key = extra._meta?.[MCP_IDEMPOTENCY_META];
      record({ tool: 'post_note', key });
      const written = typeof key === 'string' ? key : `unkeyed-${notes.size + 1}`;
      if (!notes.has(written)) {
        notes.set(written, text);
        await afterWrite?.(written);
      }
      return { content: [{ type: 'text', text: `note ${written} posted` }] };
    },
  );
  return server;
}
