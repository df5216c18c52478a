/**
 * MCP servers as a model stage's tools, through the official MCP client (`@modelcontextprotocol/
 * sdk`) over stdio or streamable HTTP. A stage offers its model only the server's tools its card
 * grants; a write grant's calls carry the stage's write-once key in the request's `_meta`
 * (`handrail/idempotency-key`), so a server that honours it writes once however often a retried
 * stage calls.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { jsonSchema, tool, type Tool } from 'ai';

/** Where an MCP server is: a command handrail starts (stdio), or a streamable HTTP endpoint. */
export type McpServerSpec =
  | { name: string; command: string; args?: string[]; env?: Record<string, string> }
  | { name: string; url: string; headers?: Record<string, string> };

/** The `_meta` key under which a write carries its idempotency key. */
export const MCP_IDEMPOTENCY_META = 'handrail/idempotency-key';

export interface McpConnection {
  readonly server: string;
  /** The server's tools, as AI SDK tools; `keyOf(name)` is the write key for a write grant, else null. */
  tools(keyOf: (name: string) => string | null): Promise<Record<string, Tool>>;
  close(): Promise<void>;
}

export async function connectMcp(spec: McpServerSpec): Promise<McpConnection> {
  const client = new Client({ name: 'handrail', version: '1' });
  const transport =
    'url' in spec
      ? new StreamableHTTPClientTransport(new URL(spec.url), {
          ...(spec.headers ? { requestInit: { headers: spec.headers } } : {}),
        })
      : new StdioClientTransport({
          command: spec.command,
          ...(spec.args ? { args: spec.args } : {}),
          ...(spec.env ? { env: spec.env } : {}),
        });
  await client.connect(transport);
  return {
    server: spec.name,
    async tools(keyOf) {
      const { tools } = await client.listTools();
      const made: Record<string, Tool> = {};
      for (const listed of tools) {
        const key = keyOf(listed.name);
        made[listed.name] = tool({
          ...(listed.description ? { description: listed.description } : {}),
          inputSchema: jsonSchema(listed.inputSchema as Parameters<typeof jsonSchema>[0]),
          execute: async (input: unknown, { abortSignal }) => {
            const result = await client.callTool(
              {
                name: listed.name,
                arguments: (input ?? {}) as Record<string, unknown>,
                ...(key === null ? {} : { _meta: { [MCP_IDEMPOTENCY_META]: key } }),
              },
              undefined,
              abortSignal ? { signal: abortSignal } : undefined,
            );
            // A tool's own error is an answer the model reads (and may act on), not a crash.
            return { isError: result.isError === true, content: result.content as unknown };
          },
        });
      }
      return made;
    },
    close: () => client.close(),
  };
}
