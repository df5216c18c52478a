/**
 * MCP tools in a model stage, against a real MCP server (streamable HTTP) and a real local
 * OpenAI-compatible model server: only the tools the card grants are offered; a write grant's
 * call carries the writer's write-once key in `_meta`, so a stage delivered again (no step of
 * the first delivery to replay) calls the tool again and the server still writes once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { defineStage, type HandoffV1 } from '../../../contracts';
import { runModelStage } from '../../../activities/model-stage';
import type { ChatModel } from '../../../src/worker/model';
import { openStore, type Store } from '../../../src/worker/store';
import { startMcpServer, type TestMcpServer } from '../../helpers/mcp-server';
import { scriptedChatModel, STEP_USD, turnFor, wikiWriter, wikiWriterScript } from './helpers';
import { startScriptedModel, type ScriptedModel } from '../../helpers/scripted-model';

const Posted = z.object({ posted: z.boolean() });
const pkg = { job_id: 'job-3', constraints: [] } as unknown as HandoffV1;
const publisher = wikiWriter([
  { name: 'search', access: 'read', system: 'wiki', usdPerCall: 0.002 },
  { name: 'post_note', access: 'write', system: 'wiki' },
]);
let mcp: TestMcpServer;
let server: ScriptedModel;
let model: ChatModel;
let store: Store;

beforeAll(async () => {
  mcp = await startMcpServer();
  // Step 1 searches, step 2 posts, step 3 answers.
  server = await startScriptedModel(wikiWriterScript);
  model = scriptedChatModel(server);
  store = await openStore({ sqlitePath: ':memory:' });
});
afterAll(async () => {
  await mcp.close();
  await server.close();
  await store.close();
});

type McpSpec = NonNullable<Parameters<typeof runModelStage>[4]['mcp']>[number];
const publish = (card: Parameters<typeof runModelStage>[4]['card'], deliveryKey: string, server?: McpSpec) =>
  runModelStage(store, model, pkg, turnFor(deliveryKey), {
    card,
    question: 'Post the refund brief to the wiki',
    output: { type: 'receipt.v1', schema: Posted },
    mcp: [server ?? { name: 'wiki', url: mcp.url }],
    maxSteps: 3,
  });

it("offers the card's MCP tools; a write carries the write-once key, and a second delivery writes nothing more", async () => {
  const first = await publish(publisher, 'job-3:publish:1');
  expect(first.body).toEqual({ posted: true });
  expect(server.requests[0]?.tools?.map((t) => t.function.name).sort()).toEqual(['post_note', 'search']);
  expect(mcp.calls).toEqual([
    { tool: 'search', key: undefined },
    { tool: 'post_note', key: 'job-3:publish:receipt.v1' },
  ]);
  // Three model steps, one search at the card's $0.002.
  expect(first.cost_usd).toBeCloseTo(3 * STEP_USD + 0.002, 9);

  // Another delivery of the same hop (its steps not recorded under this key): the tools run
  // again, and the server, keyed by the write key, keeps its one note.
  await publish(publisher, 'job-3:publish:2');
  expect(mcp.calls.filter((c) => c.tool === 'post_note')).toHaveLength(2);
  expect([...mcp.notes.entries()]).toEqual([['job-3:publish:receipt.v1', 'Refunds: 30 days']]);
});

it('does not offer an MCP tool the card does not grant', async () => {
  server.requests.length = 0;
  const researcher = defineStage({
    name: 'research',
    accepts: ['question.v1'],
    outputs: ['brief.v1'],
    criteria: ['cites what it found'],
    nominalCostUsd: 0.01,
    tools: [{ name: 'search', access: 'read', system: 'wiki' }],
  });
  // Its model then asks for post_note, which it was never offered: the stage fails, nothing is written.
  await publish(researcher, 'job-3:research:1').catch(() => undefined);
  expect(server.requests[0]?.tools?.map((t) => t.function.name)).toEqual(['search']);
  expect(mcp.calls.filter((c) => c.tool === 'post_note')).toHaveLength(2);
});

it('starts an MCP server over stdio and calls it the same way', async () => {
  const callsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-mcp-')), 'calls.jsonl');
  const output = await publish(publisher, 'job-3:publish:4', {
    name: 'wiki',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(__dirname, '..', '..', 'helpers', 'mcp-stdio-wiki.ts')],
    env: { PATH: process.env.PATH ?? '', MCP_CALLS_FILE: callsFile },
  });
  expect(output.body).toEqual({ posted: true });
  const calls = fs
    .readFileSync(callsFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
  expect(calls).toEqual([{ tool: 'search' }, { tool: 'post_note', key: 'job-3:publish:receipt.v1' }]);
});
