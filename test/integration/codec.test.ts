/**
 * Payload encryption end to end (docs/codec.md): a job run by a worker and client with a codec
 * key leaves no ticket text in its exported history nor in its user metadata, and
 * its history replays with the key (also after a rotation) and fails, naming the key, without it.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ENCRYPTED_ENCODING, handrailDataConverter, parseCodecKeys } from '../../src/codec';
import { resolveTemporalCli } from '../../src/devtools/devserver/temporal-cli';
import { jobResult, startJob } from '../../src/operator/client';
import { replayHistoryFiles } from '../../src/replay';
import { runHandrail } from '../helpers/cli';
import { jobRequest, startRail, type Rail } from '../helpers/rail';

const KEYS_JSON = JSON.stringify({ keys: [{ id: 'suite', key: crypto.randomBytes(32).toString('base64') }] });
const keys = parseCodecKeys(KEYS_JSON, 'the test');
const request = jobRequest();
const { subject, body } = request.ticket;
let rail: Rail;
let dir: string;
let exported: string;

const encoding = (p: Payload | null | undefined) =>
  p?.metadata?.encoding ? Buffer.from(p.metadata.encoding).toString() : undefined;
/** The export's text plus every base64 string in it decoded: plaintext payloads would show up in one or the other. */
function searchable(json: string): string {
  const decoded: string[] = [];
  JSON.parse(json, (_k, v: unknown) => {
    if (typeof v === 'string' && v.length >= 8 && /^[A-Za-z0-9+/]+={0,2}$/.test(v))
      decoded.push(Buffer.from(v, 'base64').toString('utf8'));
    return v;
  });
  return `${json}\n${decoded.join('\n')}`;
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-codec-it-'));
  rail = await startRail({ dataConverter: handrailDataConverter(keys) });
  await startJob(rail.client, request, rail);
  expect((await jobResult(rail.client, request.job_id)).status).toBe('completed');
  const temporal = (await resolveTemporalCli()).path;
  exported = path.join(dir, `${request.job_id}.json`);
  fs.writeFileSync(
    exported,
    execFileSync(
      temporal,
      [
        'workflow',
        'show',
        '--workflow-id',
        request.job_id,
        '--output',
        'json',
        '--address',
        inject('temporalAddress'),
        '--namespace',
        inject('namespace'),
      ],
      { encoding: 'utf8' },
    ),
  );
});

afterAll(async () => {
  await rail?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('payload encryption', () => {
  it('temporal workflow show --output json holds no ticket subject or body', () => {
    const text = searchable(fs.readFileSync(exported, 'utf8'));
    expect(text).toContain(request.job_id);
    expect(text).not.toContain(subject);
    expect(text).not.toContain(body);
  });

  it('user metadata (summary, details, activity summaries, current details) is encrypted; the keyed client reads it', async () => {
    const handle = rail.client.workflow.getHandle(request.job_id);
    const raw = await rail.client.workflowService.describeWorkflowExecution({
      namespace: inject('namespace'),
      execution: { workflowId: request.job_id },
    });
    const meta = raw.executionConfig?.userMetadata;
    expect([encoding(meta?.summary), encoding(meta?.details)]).toEqual([ENCRYPTED_ENCODING, ENCRYPTED_ENCODING]);
    // The details carry the ticket's subject: it was there to leak, and the key reads it back.
    expect(await (await handle.describe()).staticDetails()).toContain(subject);
    const summaries = ((await handle.fetchHistory()).events ?? []).flatMap((e) =>
      e.userMetadata?.summary ? [encoding(e.userMetadata.summary)] : [],
    );
    expect(summaries.length).toBeGreaterThan(0);
    expect(new Set(summaries)).toEqual(new Set([ENCRYPTED_ENCODING]));
    // Current details reach the Web UI through the metadata query; a client without the key cannot read them.
    const keyless = new Client({
      connection: rail.client.connection,
      namespace: inject('namespace'),
      dataConverter: handrailDataConverter(undefined),
    });
    await expect(keyless.workflow.getHandle(request.job_id).query('__temporal_workflow_metadata')).rejects.toThrow(
      'payload encrypted with key "suite", but no codec keys are configured',
    );
    expect(await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata')).toHaveProperty(
      'currentDetails',
      expect.any(String),
    );
  });

  it('the exported history replays with the key, and with the old key after a rotation', async () => {
    const workflowBundle = { code: fs.readFileSync(inject('workflowBundlePath'), 'utf8') };
    const rotated = parseCodecKeys(
      JSON.stringify({
        keys: [
          ...(JSON.parse(KEYS_JSON) as { keys: object[] }).keys,
          { id: 'next', key: crypto.randomBytes(32).toString('base64') },
        ],
      }),
      'rotated',
    );
    expect(rotated.current).toBe('next');
    const outcomes = [
      ...(await replayHistoryFiles([exported], { workflowBundle, dataConverter: handrailDataConverter(keys) })),
      ...(await replayHistoryFiles([exported], { workflowBundle, dataConverter: handrailDataConverter(rotated) })),
    ];
    expect(outcomes.map((o) => o.ok)).toEqual([true, true]);
    const wrong = parseCodecKeys(
      JSON.stringify({ keys: [{ id: 'other', key: crypto.randomBytes(32).toString('base64') }] }),
      'wrong',
    );
    const [failed] = await replayHistoryFiles([exported], {
      workflowBundle,
      dataConverter: handrailDataConverter(wrong),
    });
    expect(failed).toMatchObject({
      ok: false,
      error: 'CodecKeyError',
      message: expect.stringContaining('payload encrypted with key "suite", but the configured keys are other'),
    });
  });

  it('handrail replay says which key a history needs when none is configured, and passes with it in a keys file', async () => {
    const none = await runHandrail(['replay', exported], { HANDRAIL_CODEC_KEYS: '', HANDRAIL_CODEC_KEYS_FILE: '' });
    expect(none.code).toBe(1);
    expect(none.stdout).toContain(
      'CodecKeyError: payload encrypted with key "suite", but no codec keys are configured: add key "suite" to HANDRAIL_CODEC_KEYS or HANDRAIL_CODEC_KEYS_FILE',
    );
    expect(none.stdout).toContain('hint: the history was recorded with payload encryption');
    const keysFile = path.join(dir, 'keys.json');
    fs.writeFileSync(keysFile, KEYS_JSON, { mode: 0o600 });
    const keyed = await runHandrail(['replay', exported], {
      HANDRAIL_CODEC_KEYS: '',
      HANDRAIL_CODEC_KEYS_FILE: keysFile,
    });
    expect(keyed.stdout).toContain('replayed 1 history: 1 passed, 0 failed');
    expect(keyed.code).toBe(0);
  });
});
