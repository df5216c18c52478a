/**
 * The research-brief researcher's own MCP server, over stdio (the stage starts it as a command):
 * `search` looks a query up in a small offline library of billing facts and answers the best
 * matching entries with their source. A read tool: it changes nothing.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const LIBRARY: readonly { source: string; words: readonly string[]; fact: string }[] = [
  {
    source: 'policy/refunds#duplicate-charges',
    words: ['duplicate', 'twice', 'double', 'charged', 'charge'],
    fact: 'A duplicate charge is refunded in full once billing confirms both charges; no request form is needed.',
  },
  {
    source: 'policy/refunds#timing',
    words: ['long', 'time', 'days', 'when', 'take', 'timing'],
    fact: 'Refunds reach the card in 5 to 10 business days after they are issued.',
  },
  {
    source: 'policy/refunds#annual-plans',
    words: ['annual', 'plan', 'upgrade', 'yearly'],
    fact: 'Annual plans can be refunded pro rata within 30 days of the upgrade.',
  },
  {
    source: 'policy/refunds#how',
    words: ['refund', 'refunds', 'work', 'how'],
    fact: 'Refunds go back to the original payment method; store credit only on request.',
  },
];

/** The library's entries for a query, best match first (at most two). */
export function searchLibrary(query: string): { source: string; fact: string }[] {
  const words = query.toLowerCase().split(/[^a-z]+/);
  return LIBRARY.map((entry) => ({ entry, hits: entry.words.filter((w) => words.includes(w)).length }))
    .filter((m) => m.hits > 0)
    .sort((a, b) => b.hits - a.hits)
    .slice(0, 2)
    .map(({ entry }) => ({ source: entry.source, fact: entry.fact }));
}

export function libraryMcpServer(): McpServer {
  const server = new McpServer({ name: 'handrail-research-library', version: '1.0.0' });
  server.registerTool(
    'search',
    {
      description: 'Searches the billing policy library; answers matching facts with their source',
      inputSchema: { query: z.string() },
    },
    async ({ query }) => ({ content: [{ type: 'text', text: JSON.stringify(searchLibrary(query)) }] }),
  );
  return server;
}

if (require.main === module) void libraryMcpServer().connect(new StdioServerTransport());
