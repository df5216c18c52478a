/**
 * A fork's start, pure: the parent's package in the fork's name, the request's fork checked like
 * any input, an edit checked before the first hop (above all: no pass kept over changed content),
 * and the first step. The workflow API is stubbed: these are the module's decisions.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  HUMAN,
  entryUri,
  forkedPackage,
  snapshotContent,
  snapshotOf,
  transcriptUri,
  type HandoffV1,
  type JobRequest,
} from '../../../contracts';
import { sha256Hex } from '../../../contracts/sha256';
import { ticketTriage } from '../../../contracts/pipelines';
import { acceptFork, checkFork, forkStep, type ForkStart } from '../../../workflows/job/fork';
import { fixturePackage, ref } from '../rail/helpers';

vi.mock('@temporalio/workflow', async (real) => ({ ...(await real<object>()), proxyActivities: () => ({}) }));

const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const ticket = { id: 'tkt_1', customer_id: 'cus_9', subject: 'refund', body: 'charged twice', channel: 'email' };
const entryText = JSON.stringify(ticket);

/** The parent's package as delivered to the judge at hop 3: its entry stored, its log referenced. */
function parentPackage(): HandoffV1 {
  const base = fixturePackage();
  return {
    ...base,
    job_id: 'parent-1',
    artifacts: [
      {
        type: 'ticket.raw',
        uri: entryUri('parent-1', sha256Hex(entryText)),
        hash: `sha256:${sha256Hex(entryText)}`,
        schema: 'ticket.raw',
      },
      ...base.artifacts,
    ],
    memory_refs: [...base.memory_refs, transcriptUri('parent-1', 'd'.repeat(64))],
  };
}

function forkRequest(parent: unknown = parentPackage(), edit?: unknown): JobRequest {
  return {
    job_id: 'fork-1',
    entry: ticket,
    goal: 'g',
    constraints: [],
    budget: { usd: 1, revisions: 1 },
    fork: {
      of: 'parent-1',
      hop: 3,
      snapshot: snapshotOf('parent-1', parent).uri,
      parent: parent as Record<string, unknown>,
      ...(edit === undefined ? {} : { package: edit as Record<string, unknown> }),
    },
  };
}

const accept = (request: JobRequest) => acceptFork(request, ticketTriage, 'fork-1', TRACE);

describe('forkedPackage', () => {
  it("puts the parent's package in the fork's name: id, trace, entry address (same hash), no parent log", () => {
    const parent = { ...parentPackage(), context_ref: 'handrail://snapshots/parent-1/x' };
    const forked = forkedPackage(parent, { job_id: 'fork-1', traceparent: TRACE });
    expect(forked.job_id).toBe('fork-1');
    expect(forked.trace.traceparent).toBe(TRACE);
    expect(forked.artifacts[0]).toEqual({ ...parent.artifacts[0], uri: entryUri('fork-1', sha256Hex(entryText)) });
    expect(forked.artifacts.slice(1)).toEqual(parent.artifacts.slice(1));
    expect(forked.memory_refs).toEqual(['customer_id:cus_9']);
    expect(forked).not.toHaveProperty('ack');
    expect(forked).not.toHaveProperty('context_ref');
  });
});

describe('acceptFork', () => {
  it('takes a parent package that is the snapshot its address names, with the entry the request carries', () => {
    const start = accept(forkRequest())!;
    expect(start.parent.job_id).toBe('fork-1');
    expect(start.parent.hop?.to).toBe('judge');
    expect(accept({ ...forkRequest(), fork: undefined })).toBeUndefined();
  });

  it.each([
    [
      'a package other than the addressed snapshot',
      (r: JobRequest) => ({ ...r.fork!, parent: { ...r.fork!.parent, goal: 'other' } }),
      /not the snapshot its address names/,
    ],
    [
      "another job's snapshot address",
      (r: JobRequest) => ({ ...r.fork!, snapshot: snapshotOf('someone', r.fork!.parent).uri }),
      /is not a snapshot of job parent-1/,
    ],
    ['another hop', (r: JobRequest) => ({ ...r.fork!, hop: 2 }), /at hop 3/],
    [
      'itself',
      (r: JobRequest) => ({ ...r.fork!, of: 'fork-1', snapshot: snapshotOf('fork-1', r.fork!.parent).uri }),
      /its own fork/,
    ],
  ])('refuses %s (InvalidJobRequest)', (_what, change, message) => {
    const request = forkRequest();
    expect(() => accept({ ...request, fork: change(request) })).toThrow(message);
  });

  it("refuses a request whose entry is not the parent's", () => {
    expect(() => accept({ ...forkRequest(), entry: { ...ticket, body: 'other' } })).toThrow(
      /entry is not the parent's/,
    );
  });

  it('the snapshot address covers the package exactly (less its own address)', () => {
    const parent = parentPackage();
    expect(forkRequest(parent).fork!.snapshot).toContain(sha256Hex(snapshotContent(parent)));
  });
});

describe('checkFork', () => {
  const start = (edit?: unknown): ForkStart => ({ ...accept(forkRequest())!, edit });
  const parent = parentPackage();
  const withDraft = (pkg: HandoffV1, fill: string): HandoffV1 => ({
    ...pkg,
    artifacts: pkg.artifacts.map((a) => (a.type === 'summary_md' ? ref('summary_md', fill) : a)),
  });

  it('starts from the parent package unedited when there is no edit, or the edit changes nothing', () => {
    expect(checkFork(start(), ticketTriage, 'fork-1')).toEqual({ package: start().parent, edited: false });
    expect(checkFork(start(parent), ticketTriage, 'fork-1')).toMatchObject({ edited: false });
  });

  it('takes an edited draft behind no verdict, to be judged', () => {
    const checked = checkFork(start(withDraft(parent, 'e')), ticketTriage, 'fork-1');
    expect(checked).toMatchObject({ edited: true, package: { job_id: 'fork-1' } });
  });

  it("refuses an edit that keeps the parent's pass on changed content: fork_edit_rejudged", () => {
    const passed = { ...parent, evaluator: { last_verdict: 'pass' as const, failures: [] } };
    const fork: ForkStart = { ...accept(forkRequest(passed))!, edit: withDraft(passed, 'e') };
    expect(checkFork(fork, ticketTriage, 'fork-1')).toEqual({
      refused: expect.objectContaining({ ack: 'rejected_invariant', invariant: 'fork_edit_rejudged' }),
    });
    // The same pass over the same content is the parent's evidence, not an edit.
    expect(checkFork({ ...fork, edit: passed }, ticketTriage, 'fork-1')).toMatchObject({ edited: false });
  });

  it.each([
    [
      'sets a verdict',
      (p: HandoffV1) => ({ ...p, evaluator: { last_verdict: 'pass', failures: [] } }),
      'evaluator_not_reset',
    ],
    [
      'grows the wallet',
      (p: HandoffV1) => ({ ...p, budget: { ...p.budget, usd_remaining: 99 } }),
      'budget_not_increased',
    ],
    ['changes the goal', (p: HandoffV1) => ({ ...p, goal: 'another goal' }), 'goal_unchanged'],
    [
      'changes the entry',
      (p: HandoffV1) => ({ ...p, artifacts: [ref('ticket.raw', 'f'), ...p.artifacts.slice(1)] }),
      'fork_entry_kept',
    ],
    [
      'adds a type no stage makes',
      (p: HandoffV1) => ({ ...p, artifacts: [...p.artifacts, ref('invoice.v1', 'f')] }),
      'output_declared',
    ],
    ["is a third job's", (p: HandoffV1) => ({ ...p, job_id: 'someone-else' }), 'job_id_unchanged'],
  ])('refuses an edit that %s', (_what, edit, invariant) => {
    expect(checkFork(start(edit(parent)), ticketTriage, 'fork-1')).toEqual({
      refused: expect.objectContaining({ ack: 'rejected_invariant', invariant }),
    });
  });

  it('refuses an edit that is no package: rejected_schema', () => {
    expect(checkFork(start({ ...parent, artifacts: 'none' }), ticketTriage, 'fork-1')).toEqual({
      refused: expect.objectContaining({ ack: 'rejected_schema' }),
    });
  });
});

describe('forkStep', () => {
  const start = accept(forkRequest())!;

  it("re-runs the parent's hop, as sent on by an operator, when nothing was edited", () => {
    expect(forkStep(start, start.parent, false, ticketTriage, {})).toMatchObject({
      kind: 'hop',
      to: 'judge',
      from: HUMAN,
      actor: 'operator',
      reason: 'fork of parent-1 from hop 3',
      package: start.parent,
    });
  });

  it("sends an edit where the pipeline's table sends it", () => {
    const at2 = { ...start.parent, hop: { ...start.parent.hop!, to: 'draft' } };
    expect(forkStep(start, at2, true, ticketTriage, {})).toMatchObject({ kind: 'hop', to: 'judge', from: HUMAN });
  });
});
