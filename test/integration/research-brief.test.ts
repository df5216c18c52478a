/**
 * research-brief end to end on the real dev server: a scripted OpenAI-compatible model server
 * (a real local HTTP server) answers the four model stages, the researcher searches through its
 * own MCP server (started over stdio per delivery), and the writer writes the brief once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startJob } from '../../src/operator/client';
import { startResearchModel } from '../../src/devtools/research-model';
import type { ScriptedModel } from '../helpers/scripted-model';
import { jobRequest, startRail, uniqueId, type Rail } from '../helpers/rail';

let model: ScriptedModel;
let rail: Rail;
beforeAll(async () => {
  model = await startResearchModel();
  // The worker's model is read from the environment when its workers are created.
  Object.assign(process.env, {
    HANDRAIL_MODEL_BASE_URL: model.baseUrl,
    HANDRAIL_MODEL: 'research-offline',
    HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
    HANDRAIL_MODEL_USD_PER_MTOK_OUT: '4',
  });
  rail = await startRail();
});
afterAll(async () => {
  await rail?.stop();
  await model?.close();
});

it(
  'plans, researches through its MCP search tool, passes the critic and writes the brief once',
  { timeout: 60_000 },
  async () => {
    const request = { ...jobRequest({ job_id: uniqueId('brief') }), pipeline: 'research-brief' };
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result();

    expect(result.status).toBe('completed');
    expect(result.acks.map((a) => `${a.stage}:${a.ack}`)).toEqual([
      'planner:accepted',
      'researcher:accepted',
      'critic:accepted',
      'writer:accepted',
    ]);
    // planner 1 turn, researcher 2 steps (searches, then notes), critic 1, writer 1.
    expect(model.requests).toHaveLength(5);
    expect(model.requests[1]!.tools?.map((t) => t.function.name)).toEqual(['search']);
    const searched = model.requests[2]!.messages.filter((m) => m.role === 'tool');
    expect(searched.length).toBeGreaterThan(0);
    expect(searched.map((m) => m.content).join('\n')).toContain('policy/refunds#duplicate-charges');
    expect(result.receipt).toMatchObject({
      write_key: `${request.job_id}:writer:brief.v1`,
      system: 'briefs',
      reference: `briefs/${request.job_id}`,
      status: 'created',
    });
    const writes = await rail.store.listWrites(request.job_id);
    expect(writes).toHaveLength(1);
    expect(result.spent_usd).toBeGreaterThan(0);
  },
);
