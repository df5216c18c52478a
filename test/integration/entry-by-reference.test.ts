/**
 * Personal data by reference (contracts/entry.ts, docs/codec.md): the raw ticket rides inline on
 * the job's first package only. The first stage stores it under the job and passes its address
 * and hash on, so no later package — in an activity's input or result, or the `package` query —
 * carries the ticket's subject, body or question; the store holds exactly the bytes addressed.
 */
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEntryUri, type HandoffV1, type StageResult, type StageWork } from '../../contracts';
import { jobResult, startJob } from '../../src/operator/client';
import { sha256Hex } from '../../src/worker/store/content';
import type { JobStatusView } from '../../workflows/definitions';
import {
  HandrailAck,
  HandrailAcks,
  HandrailHops,
  HandrailStage,
  HandrailStatus,
  HandrailUsdRemaining,
  HandrailVerdict,
} from '../../workflows/search-attributes';
import { handrailUpserts, jobRequest, startRail, type Rail } from '../helpers/rail';

const request = jobRequest();
const { subject, body } = request.ticket;
const question = 'How do refunds work for a duplicate charge?';
let rail: Rail;
let events: temporal.api.history.v1.IHistoryEvent[];

/** The JSON a plain payload carries (the suite runs without codec keys). */
const decoded = <T>(p: temporal.api.common.v1.IPayloads | null | undefined): T =>
  JSON.parse(Buffer.from(p!.payloads![0]!.data!).toString('utf8')) as T;

beforeAll(async () => {
  rail = await startRail();
  await startJob(rail.client, request, rail);
  expect((await jobResult(rail.client, request.job_id)).status).toBe('completed');
  events = (await rail.client.workflow.getHandle(request.job_id).fetchHistory()).events ?? [];
});

afterAll(async () => {
  await rail?.stop();
});

describe('the ticket by reference', () => {
  it('only the first delivery carries the ticket; every later package carries its job-scoped address', () => {
    const works = events
      .flatMap((e) =>
        e.activityTaskScheduledEventAttributes?.activityType?.name && e.activityTaskScheduledEventAttributes.input
          ? [decoded<StageWork>(e.activityTaskScheduledEventAttributes.input)]
          : [],
      )
      .filter((w) => w.package);
    const results = events
      .flatMap((e) =>
        e.activityTaskCompletedEventAttributes?.result
          ? [decoded<StageResult>(e.activityTaskCompletedEventAttributes.result)]
          : [],
      )
      .filter((r) => r?.package);
    expect(works.map((w) => w.stage)).toEqual(['intake', 'retrieve', 'draft', 'judge', 'writeback']);
    const [first, ...later] = works;
    expect(JSON.stringify(first)).toContain(encodeURIComponent(body));
    expect(first!.store_entry).toBe(true);
    const packages: HandoffV1[] = [...later.map((w) => w.package), ...results.map((r) => r.package)];
    expect(packages).toHaveLength(9);
    for (const pkg of packages) {
      const text = JSON.stringify(pkg);
      for (const secret of [subject, body, question, encodeURIComponent(body)]) expect(text).not.toContain(secret);
      expect(parseEntryUri(pkg.artifacts[0]!.uri)).toEqual({ jobId: request.job_id, sha: expect.any(String) });
    }
    expect(later.every((w) => w.store_entry === undefined)).toBe(true);
  });

  it('the history marks no patch (the 1.0 rail has none), and the package query shows the reference', async () => {
    expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toEqual([]);
    const pkg = await rail.client.workflow.getHandle(request.job_id).query<HandoffV1>('package');
    expect(JSON.stringify(pkg)).not.toContain(body);
  });

  it('the rail publishes only changed search attributes, once per step, ending as the status query says', async () => {
    const handle = rail.client.workflow.getHandle(request.job_id);
    const upserts = handrailUpserts(events);
    // None at the first hop (startJob set the first attributes), one at each of the four later
    // hops' start, one at the job's end.
    expect(upserts).toHaveLength(5);
    expect(upserts.every((keys) => keys.length > 0 && keys.length < 8)).toBe(true);
    const view = await handle.query<JobStatusView>('status');
    const attrs = (await handle.describe()).typedSearchAttributes;
    expect([
      attrs.get(HandrailStatus),
      attrs.get(HandrailStage),
      attrs.get(HandrailHops),
      attrs.get(HandrailVerdict),
      attrs.get(HandrailAck),
      attrs.get(HandrailUsdRemaining),
    ]).toEqual(['completed', view.stage, view.hops, view.last_verdict, view.last_ack?.ack, view.usd_remaining]);
    expect([...(attrs.get(HandrailAcks) ?? [])].sort()).toEqual(
      [...new Set((await handle.query<{ ack: string }[]>('acks')).map((a) => a.ack))].sort(),
    );
  });

  it('the store holds the ticket, byte for byte, under the address the packages carry', async () => {
    const pkg = await rail.client.workflow.getHandle(request.job_id).query<HandoffV1>('package');
    const entry = pkg.artifacts[0]!;
    const { sha } = parseEntryUri(entry.uri)!;
    expect(entry.hash).toBe(`sha256:${sha}`);
    const stored = await rail.store.getContent(sha);
    expect(stored).not.toBeNull();
    expect(sha256Hex(stored!)).toBe(sha);
    expect(JSON.parse(stored!)).toEqual(request.ticket);
  });
});
