/**
 * `handrail` as an operator runs it: a real process (bin/handrail.js) against the suite's dev
 * server, pointed at this file's worker through TEMPORAL_ADDRESS and HANDRAIL_TASK_QUEUE, and at
 * its store through HANDRAIL_DATA_DIR (or the DATABASE_URL both inherit).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeTypedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowRuntime } from '../../src/worker/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isTranscriptUri, TRANSCRIPT_SEPARATOR } from '../../contracts';
import { listJobs, startJob } from '../../src/operator/client';
import { openStore, type Store } from '../../src/worker/store';
import { freePort } from '../../src/devtools/devserver/server';
import type { JobStatusView } from '../../workflows/definitions';
import { runHandrail } from '../helpers/cli';
import { jobRequest, startRail, uniqueId, type Rail } from '../helpers/rail';

let rail: Rail;
let store: Store;
let dir: string;
let dataDir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-cli-'));
  // The CLI opens the worker's store itself (`transcript`): one data dir for both.
  dataDir = path.join(dir, 'data');
  store = await openStore({ databaseUrl: process.env.DATABASE_URL, dataDir });
  rail = await startRail({ store });
});
afterAll(async () => {
  await rail?.stop();
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI against this file's server, worker and store. */
const handrail = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runHandrail(args, {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    HANDRAIL_TASK_QUEUE: rail.taskQueue,
    HANDRAIL_DATA_DIR: dataDir,
    ...env,
  });

/** A ticket file for a job; `overrides` change the request (budget, hops). */
function ticketFile(overrides: Parameters<typeof jobRequest>[0] = {}): { file: string; jobId: string } {
  const request = jobRequest(overrides);
  const file = path.join(dir, `${request.job_id}.json`);
  fs.writeFileSync(file, JSON.stringify(request));
  return { file, jobId: request.job_id };
}

describe('handrail CLI against the real dev server', () => {
  it('start --follow prints one line per hop and exits 0 on completion; show lists the acks and receipt; history --out replays', async () => {
    const { file, jobId } = ticketFile();
    const started = await handrail(['start', file, '--follow']);
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    const hops = started.stdout.split('\n').filter((l) => l.startsWith('hop '));
    expect(hops.map((l) => l.split(/\s+/)[2])).toEqual(['intake', 'retrieve', 'draft', 'judge', 'writeback']);
    expect(started.stdout).toMatch(new RegExp(`${jobId} completed: written back \\(hops 4, spent \\$0\\.\\d+\\)`));

    const shown = await handrail(['show', jobId]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/HOP\s+STAGE\s+ACK/);
    expect(shown.stdout).toMatch(/4\s+writeback\s+accepted/);
    expect(shown.stdout).toContain(`receipt  ${jobId}:writeback:receipt.v1 → crm crm_tickets/`);
    // The summary, one numbered segment per stage.
    expect(shown.stdout).toMatch(
      /^Summary \(5 segments\)\n1\. hop 0 intake → intake\.v1: intent .*\n(?:.*\n){3}5\. hop 4 writeback → receipt\.v1: CRM note written to record /m,
    );

    const out = path.join(dir, `${jobId}.history.json`);
    const exported = await handrail(['history', jobId, '--out', out]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(/^wrote \d+ events/);
    const history = historyFromJSON(JSON.parse(fs.readFileSync(out, 'utf8')));
    expect(history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name).toBe('handoffJob');
    await Worker.runReplayHistory(
      { ...workflowRuntime(), workflowBundle: { code: fs.readFileSync(inject('workflowBundlePath'), 'utf8') } },
      history,
      jobId,
    );
  });

  it('start sets the first search attributes with the start, as a client that knows the pipelines does: the reference job shows them before its first hop and its history is no longer', async () => {
    const { file, jobId } = ticketFile();
    expect((await handrail(['start', file, '--follow'])).code).toBe(0);
    const viaCli = (await rail.client.workflow.getHandle(jobId).fetchHistory()).events ?? [];
    // The same job through the client API, whose plugin names the pipelines.
    const { handle } = await startJob(rail.client, jobRequest(), { taskQueue: rail.taskQueue });
    expect((await handle.result()).status).toBe('completed');
    const viaClient = (await handle.fetchHistory()).events ?? [];
    const started = (events: typeof viaCli) =>
      Object.fromEntries(
        decodeTypedSearchAttributes(events[0]?.workflowExecutionStartedEventAttributes?.searchAttributes?.indexedFields)
          .getAll()
          .map(({ key, value }) => [key.name, value]),
      );
    expect(started(viaCli)).toEqual({
      HandrailStatus: 'running',
      HandrailPipeline: 'ticket-triage',
      HandrailStage: 'intake',
      HandrailAck: 'none',
      HandrailVerdict: 'none',
      HandrailHops: 0,
      HandrailUsdRemaining: 1,
    });
    expect(started(viaCli)).toEqual(started(viaClient));
    expect(viaCli).toHaveLength(viaClient.length);
  });

  it('follow <job> prints each hop as it starts and as it is acked, then how the job finished; --from resumes after an event id; a bad --from is usage', async () => {
    const { file, jobId } = ticketFile();
    expect((await handrail(['start', file])).code).toBe(0);
    const followed = await handrail(['follow', jobId]);
    expect([followed.stderr, followed.code]).toEqual(['', 0]);
    const lines = followed.stdout.trim().split('\n');
    expect(lines[0]).toBe(`following ${jobId}`);
    expect(lines.filter((l) => / working \(reserved/.test(l)).map((l) => l.split(/\s+/)[2])).toEqual([
      'intake',
      'retrieve',
      'draft',
      'judge',
      'writeback',
    ]);
    expect(lines.filter((l) => / accepted — /.test(l))).toHaveLength(5);
    expect(lines.at(-1)).toMatch(/^finished completed: /);

    const events = (await handrail(['follow', jobId, '--json'])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id?: number; type: string });
    const numbered = events.filter((e) => e.id !== undefined);
    const cut = numbered[2]!.id!;
    const rest = (await handrail(['follow', jobId, '--from', String(cut), '--json'])).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id?: number; type: string })
      .filter((e) => e.id !== undefined);
    expect(rest).toEqual(numbered.filter((e) => e.id! > cut));
    const bad = await handrail(['follow', jobId, '--from', '3.0']);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--from must be an event id')]);
    // A job Temporal does not know is said so, as `status` says it (the process does not just end).
    const missing = await handrail(['follow', 'no-such-job-to-follow']);
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([
      3,
      '',
      expect.stringContaining('no job "no-such-job-to-follow"'),
    ]);
  });

  it("show --hop N prints the package exactly as delivered at that hop: a stage's from the store, a refused or human hop's from the job", async () => {
    const { file, jobId } = ticketFile({ budget: { usd: 0.005, revisions: 1 } });
    expect((await handrail(['start', file, '--follow'])).code).toBe(10);
    interface Shown {
      hop: number;
      stage: string;
      ack: string;
      snapshot: string;
      source: string;
      package: {
        hop: { count: number; to: string };
        ack: { ack: string };
        artifacts: { type: string }[];
        context_ref?: string;
      };
    }
    const show = async (hop: number) => {
      const run = await handrail(['show', jobId, '--hop', String(hop), '--json']);
      expect(run.stderr).toBe('');
      return JSON.parse(run.stdout) as Shown[];
    };

    const [intake] = await show(0);
    expect(intake).toMatchObject({ stage: 'intake', ack: 'accepted', source: 'store' });
    expect(intake!.snapshot).toMatch(new RegExp(`^handrail://snapshots/${jobId}/[0-9a-f]{64}$`));
    expect(intake!.package).toMatchObject({ hop: { count: 0, to: 'intake' }, ack: { ack: 'accepted' } });
    expect(intake!.package.artifacts.map((a) => a.type)).toEqual(['ticket.raw']);
    expect(intake!.package).not.toHaveProperty('context_ref');

    // Hop 1: retrieve's delivery, and the package handed to the human after draft was refused.
    expect((await show(1)).map((s) => [s.stage, s.ack, s.source])).toEqual([
      ['retrieve', 'accepted', 'store'],
      ['human', 'accepted', 'job'],
    ]);
    const [draft] = await show(2);
    expect(draft).toMatchObject({
      stage: 'draft',
      ack: 'rejected_budget',
      source: 'job',
      package: { hop: { count: 2, to: 'draft' }, ack: { ack: 'rejected_budget' } },
    });

    // Content-addressed: the acks name the same addresses the store and the job answer for.
    const acks = (JSON.parse((await handrail(['show', jobId, '--json'])).stdout) as { acks: { snapshot?: string }[] })
      .acks;
    expect(acks.map((a) => a.snapshot)).toEqual(expect.arrayContaining([intake!.snapshot, draft!.snapshot]));
    expect(new Set(acks.flatMap((a) => (a.snapshot ? [a.snapshot] : []))).size).toBe(
      acks.filter((a) => a.snapshot).length,
    );

    const missing = await handrail(['show', jobId, '--hop', '9']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`job ${jobId} has no snapshot at hop 9; hops with one: 0, 1, 2`);
    await rail.client.workflow.getHandle(jobId).cancel();
  });

  it('an empty wallet: --follow exits 10 at the human; status --json and list --status escalated show it; a refused decision exits 5; top-up --follow completes', async () => {
    const { file, jobId } = ticketFile({ budget: { usd: 0.005, revisions: 1 } });
    const started = await handrail(['start', file, '--follow']);
    expect(started.code).toBe(10);
    expect(started.stdout).toMatch(/hop 2\s+draft\s+rejected_budget/);
    expect(started.stdout).toMatch(/hop 1\s+human\s+accepted\s+verdict none, \$[\d.]+ and 1 revision left/);
    expect(started.stdout).toContain(
      `decide with: handrail decide ${jobId} approve|reject|top-up|revise --actor <you>`,
    );

    const status = await handrail(['status', jobId, '--json']);
    expect(status.code).toBe(0);
    const view = JSON.parse(status.stdout) as JobStatusView;
    expect(view).toMatchObject({ job_id: jobId, status: 'escalated', stage: 'human' });
    expect(view.escalation?.options).toContain('top_up');

    // Visibility trails the workflow by a moment; wait until the server's index has caught up.
    for (
      let tries = 0;
      !(await listJobs(rail.client, { status: 'escalated', taskQueue: rail.taskQueue })).some(
        (j) => j.job_id === jobId,
      );
      tries++
    ) {
      expect(tries).toBeLessThan(100);
      await new Promise((r) => setTimeout(r, 200));
    }
    const listed = await handrail(['list', '--status', 'escalated', '--ack', 'accepted']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${jobId}\\s+escalated\\s+human\\s+accepted`, 'm'));
    // Its newest ack is the human hop's `accepted`; `--ack` finds it by the refusal it met on the way.
    const refusedForMoney = await handrail(['list', '--ack', 'rejected_budget', '--json']);
    expect((JSON.parse(refusedForMoney.stdout) as { job_id: string }[]).map((j) => j.job_id)).toContain(jobId);

    const refused = await handrail(['decide', jobId, 'top-up', '--actor', 'ops.lead']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('top_up needs usd > 0 or revisions > 0');

    const decided = await handrail(['decide', jobId, 'top-up', '--actor', 'ops.lead', '--usd', '1', '--follow']);
    expect(decided.code).toBe(0);
    expect(decided.stdout).toContain(`${jobId}: top-up by ops.lead; the wallet grows and the job resumes at draft`);
    expect(decided.stdout).not.toMatch(/hop 0\s+intake/);
    expect(decided.stdout).toMatch(/draft\s+accepted by ops\.lead/);
    expect(decided.stdout).toContain(`${jobId} completed`);
  });

  it('cancel ends a waiting job as cancelled (exit 0); cancelling it again exits 5', async () => {
    const { file, jobId } = ticketFile({ budget: { usd: 0.005, revisions: 1 } });
    expect((await handrail(['start', file, '--follow', '--json'])).code).toBe(10);
    const cancelled = await handrail(['cancel', jobId, '--json']);
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toEqual({ job_id: jobId, cancel_requested: true, status: 'cancelled' });
    const again = await handrail(['cancel', jobId]);
    expect(again.code).toBe(5);
    expect(again.stderr).toContain(`job "${jobId}" already ended (cancelled)`);
  });

  it('clear errors: unknown job exits 3, a server that is down exits 4 within seconds, an invalid ticket file names the field (exit 2)', async () => {
    const unknown = await handrail(['status', uniqueId('no-such-job')]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/no job "no-such-job-.*" in this namespace/);

    const down = await handrail(['list'], { TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` });
    expect(down.code).toBe(4);
    expect(down.stderr).toContain('Cannot reach Temporal at 127.0.0.1:');
    expect(down.ms).toBeLessThan(20_000);

    const { ticket } = jobRequest();
    const bad = path.join(dir, 'no-customer.json');
    fs.writeFileSync(bad, JSON.stringify({ ...ticket, customer_id: undefined }));
    const invalid = await handrail(['start', bad]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain(`invalid ticket file ${bad}: field "customer_id"`);
  });

  it('start <directory> exits 2 saying it is a directory, without a stack trace', async () => {
    const directory = await handrail(['start', dir]);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toBe(
      `handrail: cannot read ticket file ${dir}: it is a directory; give a ticket JSON file\n`,
    );
  });

  it('a namespace the server does not have is named as such (exit 2), not reported as an unreachable server', async () => {
    const namespace = await handrail(['list'], { TEMPORAL_NAMESPACE: 'nope' });
    expect(namespace.code).toBe(2);
    expect(namespace.stderr).toContain(`Temporal at ${inject('temporalAddress')} has no namespace "nope"`);
    expect(namespace.stderr).not.toContain('Cannot reach');
  });

  it('numbers from the command line: a negative budget is refused by the contract, --limit 0 by the CLI (exit 2); a BOM-prefixed ticket starts', async () => {
    const negative = await handrail(['start', ticketFile().file, '--budget-usd', '-1']);
    expect(negative.code).toBe(2);
    expect(negative.stderr).toMatch(/field "budget\.usd": Too small/);

    const none = await handrail(['list', '--limit', '0']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--limit must be a whole number of at least 1, got "0"');

    const { file, jobId } = ticketFile();
    fs.writeFileSync(file, `\uFEFF${fs.readFileSync(file, 'utf8')}`);
    const bom = await handrail(['start', file]);
    expect(bom.stderr).toBe('');
    expect(bom.stdout).toContain(`Started job ${jobId}`);
  });

  it('transcript: the log of an escalated support ticket, what escalation was handed over its transcript_prepend edge, as xml and json; an unknown stage exits 2', async () => {
    const base = jobRequest();
    const request = {
      ...base,
      pipeline: 'support-routing',
      ticket: {
        ...base.ticket,
        subject: 'Logged out AGAIN',
        body: 'This is UNACCEPTABLE!! The app logs me out every hour. Why is this still broken?',
      },
    };
    const jobId = request.job_id;
    const result = await (await startJob(rail.client, request, rail)).handle.result();
    expect(result.acks.map((a) => a.stage)).toEqual(['classify', 'escalation', 'review', 'crm-note']);

    const whole = await handrail(['transcript', jobId]);
    expect(whole.stderr).toBe('');
    expect(whole.code).toBe(0);
    const lines = whole.stdout.split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^transcript of ${jobId}: 4 turns, handrail://transcripts/${jobId}/[0-9a-f]{64}$`),
    );
    // classify's prompt is the ticket (subject, then body: a continuation line); its answer, the scores.
    expect(lines[1]).toBe('[__user__] Logged out AGAIN');
    expect(lines[2]).toBe(request.ticket.body);
    expect(lines[3]).toMatch(
      /^\[classify:assistant:text\] intent \S+, sentiment 0(\.\d+)?, complexity \d+\/10, language en$/,
    );

    const escalation = await handrail(['transcript', jobId, '--stage', 'escalation']);
    expect(escalation.code).toBe(0);
    const [heading, ...handed] = escalation.stdout.trimEnd().split('\n');
    expect(heading).toMatch(/^hop 1 · escalation · transcript_prepend · \d+ tokens$/);
    expect(handed.join('\n')).toBe(
      `${lines.slice(1, 4).join('\n')}${TRANSCRIPT_SEPARATOR}Write the escalation note for ticket ${request.ticket.id}.`,
    );

    const xml = await handrail(['transcript', jobId, '--format', 'xml']);
    expect(xml.code).toBe(0);
    expect(xml.stdout).toContain(
      `<turn number="1">\n  <user>\n    Logged out AGAIN\n    ${request.ticket.body}\n  </user>\n  <assistant agent="classify">`,
    );
    expect(xml.stdout).toContain('<turn number="4">');

    const json = await handrail(['transcript', jobId, '--json']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      job_id: string;
      transcript: string;
      turns: { stage: string; handover?: { used: string } }[];
    };
    expect(parsed).toMatchObject({ job_id: jobId, transcript: result.package.memory_refs.find(isTranscriptUri) });
    expect(parsed.turns.map((t) => `${t.stage}:${t.handover?.used ?? '-'}`)).toEqual([
      'classify:-',
      'escalation:transcript_prepend',
      'review:-',
      'crm-note:-',
    ]);

    const nosuch = await handrail(['transcript', jobId, '--stage', 'nosuch']);
    expect(nosuch.code).toBe(2);
    expect(nosuch.stderr).toBe(
      `handrail: stage "nosuch" has no turn in the transcript of ${jobId}; stages with turns: classify, escalation, review, crm-note\n`,
    );

    // Another store than the worker's lacks the job's turns: refused as unverifiable (exit 1), without a stack trace.
    const elsewhere = await handrail(['transcript', jobId], {
      HANDRAIL_DATA_DIR: path.join(dir, 'other-store'),
      DATABASE_URL: '',
    });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(
      /^handrail: transcript handrail:\/\/transcripts\/.* is not in the store \(read from the sqlite store; the worker must use the same HANDRAIL_DATA_DIR or DATABASE_URL\)\n$/,
    );
  });

  it('transcript of a job refused before its first turn: no transcript yet (exit 0); an unknown job exits 3', async () => {
    const { file, jobId } = ticketFile({ budget: { usd: 0, revisions: 1 } });
    expect((await handrail(['start', file, '--follow'])).code).toBe(10);
    const none = await handrail(['transcript', jobId]);
    expect(none).toMatchObject({ code: 0, stdout: `job ${jobId} has no transcript yet\n`, stderr: '' });
    expect(JSON.parse((await handrail(['transcript', jobId, '--stage', 'intake', '--json'])).stdout)).toEqual({
      job_id: jobId,
      stage: 'intake',
      turns: [],
    });
    await handrail(['cancel', jobId]);

    const unknown = await handrail(['transcript', uniqueId('no-such-job')]);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/no job "no-such-job-.*" in this namespace/);
  });
});
