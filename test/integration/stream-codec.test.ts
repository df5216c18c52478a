/**
 * With the payload codec on, the live stream keeps nothing plaintext in the store: a model's text
 * (with a marker in it) and the rail's events go into `job_stream` sealed with the codec's keys,
 * and a follower with those keys reads the marker back as the model wrote it. A reader without
 * the keys is shown no text at all.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel } from '../../src/devtools/scripted-model';
import { jobResult, startJob } from '../../src/operator/client';
import type { JobEvent } from '../../src/stream/events';
import { followJob } from '../../src/stream/follow';
import { openStore, type Store } from '../../src/worker/store';
import { jobRequest, startRail, type Rail } from '../helpers/rail';

const MARKER = `stream-marker-${crypto.randomBytes(6).toString('hex')}`;
const KEYS_JSON = JSON.stringify({ keys: [{ id: 'stream', key: crypto.randomBytes(32).toString('base64') }] });
const ENV = {
  HANDRAIL_CODEC_KEYS: KEYS_JSON,
  HANDRAIL_MODEL: 'marker-1',
  HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
  HANDRAIL_MODEL_USD_PER_MTOK_OUT: '1',
};
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-stream-codec-'));

let model: ScriptedModel;
let store: Store;
let rail: Rail;

beforeAll(async () => {
  // The draft writes the marker; the judge passes it.
  model = await startScriptedModel((request) => ({
    text: request.messages[0]?.content?.startsWith('You grade')
      ? JSON.stringify({ answers_question: 1, note: 'answers it' })
      : `## Triage summary\n\nAnnual plans are refunded pro rata within 30 days [refund-policy.2]. ${MARKER}`,
  }));
  // The worker, its journal writes and the follower read the keys from the environment.
  Object.assign(process.env, ENV, { HANDRAIL_MODEL_BASE_URL: model.baseUrl });
  store = await openStore({ dataDir });
  rail = await startRail({ store });
});
afterAll(async () => {
  await rail?.stop();
  await store?.close();
  await model?.close();
  for (const name of [...Object.keys(ENV), 'HANDRAIL_MODEL_BASE_URL']) delete process.env[name];
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it("a model's text reaches a follower with the keys, and the store's stream holds it only sealed", async () => {
  const request = jobRequest();
  await startJob(rail.client, request, rail);
  const events: JobEvent[] = [];
  for await (const item of followJob(rail.client, request.job_id, { store }))
    if (item.kind === 'event') events.push(item.event);
  expect((await jobResult(rail.client, request.job_id)).status).toBe('completed');
  const text = events.flatMap((e) => (e.type === 'text_delta' ? [e.delta] : [])).join('');
  expect(text).toContain(MARKER);

  const db = new Database(path.join(dataDir, 'handrail.sqlite'), { readonly: true });
  try {
    const rows = db.prepare('SELECT key, body FROM job_stream WHERE job_id = ?').all(request.job_id) as {
      key: string;
      body: string;
    }[];
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.filter((r) => !r.body.startsWith('sealed:')).map((r) => [r.key, r.body])).toEqual([]);
    expect(rows.filter((r) => r.body.includes(MARKER) || r.body.includes('refund-policy')).map((r) => r.key)).toEqual(
      [],
    );
  } finally {
    db.close();
  }

  // A reader without the keys: the rail's events (from the rail's records), no text.
  delete process.env.HANDRAIL_CODEC_KEYS;
  try {
    const blind: JobEvent[] = [];
    for await (const item of followJob(rail.client, request.job_id, { store }))
      if (item.kind === 'event') blind.push(item.event);
    expect(blind.filter((e) => e.type === 'text_delta')).toEqual([]);
    expect(blind.at(-1)).toMatchObject({ type: 'job_finished', status: 'completed' });
  } finally {
    process.env.HANDRAIL_CODEC_KEYS = KEYS_JSON;
  }
});
