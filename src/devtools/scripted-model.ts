/**
 * A real HTTP server speaking OpenAI's chat completions, scripted by the test: each request is
 * recorded and answered by `answer` (text, or tool calls), with token usage so the wallet can
 * pay. Tests and the offline demo (research-model) run on it. What a local OpenAI-compatible server (vLLM, llama.cpp, Ollama) looks like to the AI SDK.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
  response_format?: unknown;
  /** Asked for as Server-Sent Events (the AI SDK does when a hop's text is followed). */
  stream?: boolean;
}

export type ScriptedAnswer =
  { text: string; usage?: Usage } | { toolCalls: { id: string; name: string; input: unknown }[]; usage?: Usage };
/** An answer, or `{ failure: status }`: the endpoint failing the request (a 503: try again later). */
export type ScriptedReply = ScriptedAnswer | { failure: number };

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ScriptedModel {
  baseUrl: string;
  /** Every request's body, in arrival order. */
  requests: ChatRequestBody[];
  /** May answer later (a test holding a request in flight). */
  answer: (request: ChatRequestBody) => ScriptedReply | Promise<ScriptedReply>;
  close(): Promise<void>;
}

export const DEFAULT_USAGE: Usage = { prompt_tokens: 1_000, completion_tokens: 100 };

export async function startScriptedModel(answer: ScriptedModel['answer']): Promise<ScriptedModel> {
  const model: ScriptedModel = { baseUrl: '', requests: [], answer, close: async () => undefined };
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(data) as ChatRequestBody;
      model.requests.push(body);
      void Promise.resolve(model.answer(body)).then((reply) => {
        if ('failure' in reply) {
          res.writeHead(reply.failure, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'scripted failure', type: 'server_error' } }));
          return;
        }
        if (body.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' }).end(completionAsStream(completion(reply)));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(reply)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  model.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  model.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return model;
}

function completion(reply: ScriptedAnswer) {
  const message =
    'text' in reply
      ? { role: 'assistant', content: reply.text }
      : {
          role: 'assistant',
          content: null,
          tool_calls: reply.toolCalls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: JSON.stringify(c.input) },
          })),
        };
  return {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'scripted',
    choices: [{ index: 0, message, finish_reason: 'text' in reply ? 'stop' : 'tool_calls' }],
    usage: reply.usage ?? DEFAULT_USAGE,
  };
}

/**
 * A chat completion as OpenAI streams it (`stream: true`, usage included): the text a few
 * characters at a time (or the tool calls), the finish reason, the usage, then `[DONE]`. Test
 * servers that answer with a completion answer a streamed request with this.
 */
export function completionAsStream(completion: {
  id?: string;
  model?: string;
  choices: { message: { content?: string | null; tool_calls?: unknown[] }; finish_reason: string }[];
  usage?: unknown;
}): string {
  const frames: string[] = [];
  const chunk = (choice: object | undefined, usage?: unknown) =>
    frames.push(
      `data: ${JSON.stringify({
        id: completion.id ?? 'chatcmpl-stream',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: completion.model ?? 'scripted',
        choices: choice ? [{ index: 0, ...choice }] : [],
        ...(usage ? { usage } : {}),
      })}\n\n`,
    );
  const [first] = completion.choices;
  const text = first?.message.content ?? '';
  const calls = first?.message.tool_calls;
  chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null });
  for (let at = 0; at < text.length; at += STREAM_PIECE)
    chunk({ delta: { content: text.slice(at, at + STREAM_PIECE) }, finish_reason: null });
  if (calls)
    chunk({ delta: { tool_calls: calls.map((c, index) => ({ index, ...(c as object) })) }, finish_reason: null });
  chunk({ delta: {}, finish_reason: first?.finish_reason ?? 'stop' });
  if (completion.usage) chunk(undefined, completion.usage);
  frames.push('data: [DONE]\n\n');
  return frames.join('');
}

/** Characters per streamed text chunk: about a token's worth. */
const STREAM_PIECE = 4;

/** How many tool results the request carries: the loop's step number, less one. */
export const toolResultsIn = (request: ChatRequestBody) => request.messages.filter((m) => m.role === 'tool').length;
