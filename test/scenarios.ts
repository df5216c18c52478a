/**
 * The rail's scenarios, each run end to end on a real server with the production stages:
 * `npm run record-histories` records their histories and results for the replay suite, and
 * test/integration/recorded-results.test.ts runs them again and compares the results.
 */
import type { Client } from '@temporalio/client';
import type { HandrailActivities } from '../activities/built-in';
import { readArtifactText } from '../activities/artifacts';
import { ApplicationFailure } from '@temporalio/common';
import {
  TOOL_APPROVAL_DECIDED,
  toolCallDigest,
  type StageResult,
  type StageWork,
  isSnapshotUri,
  type Artifact,
  isTranscriptUri,
  type HandoffV1,
  type JobRequest,
  type JobResult,
  type Pipeline,
} from '../contracts';
import { decideUpdate } from '../workflows/definitions';
import { firstPackage } from '../workflows/rail/first-package';
import { HandrailStatus } from '../workflows/search-attributes';
import type { StageHopRequest, StageHopResult } from '../workflows/stage-hop';
import { startJob, type JobHandle } from '../src/operator/client';
import { forkJob } from '../src/operator/fork';
import { hopSnapshots } from '../src/operator/snapshot';
import type { Store } from '../src/worker/store';
import { sampleJobRequest } from '../src/devtools/samples/tickets';
import type { TicketJobRequest } from '../contracts/pipelines/ticket-artifacts';
import { ticketTriage } from '../contracts/pipelines/ticket-triage';

/** A client and the task queue a handrail worker polls. */
export interface ScenarioRail {
  client: Client;
  taskQueue: string;
  /** The worker's pipelines, for the start attributes `startJob` sets (the client's plugin's when absent). */
  pipelines?: readonly Pipeline[];
  /** The worker's store, for scenarios that read what a job recorded (a fork reads its parent's snapshots). */
  store?: Store;
}

export interface ScenarioRun {
  /** The workflow whose history is the scenario's fixture. */
  workflowId: string;
  result: JobResult | StageHopResult;
}

export interface Scenario {
  /** File name of the fixture: test/histories/<name>.json. */
  name: string;
  summary: string;
  /** `jobId` must be new to the server: the recorder uses a fixed one, tests a unique one. */
  run(rail: ScenarioRail, jobId: string): Promise<ScenarioRun>;
  /** What makes the run this scenario; the recorder refuses to store a run that misses it. */
  check(result: ScenarioRun['result']): string | undefined;
  /** Activities its worker runs in place of the production ones, each wrapping the real one:
   * a scenario that must act while a stage is at work holds the stage (its own worker, queue). */
  activities?: (real: HandrailActivities) => Partial<HandrailActivities>;
}

/** Fixed trace (the example package's) for packages delivered straight to stageHop (a job would generate one). */
export const SEED_TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACE = SEED_TRACEPARENT;

/** The demo's refund ticket under a ticket id of the scenario's own, so CRM writes never meet. */
function refundJob(jobId: string, ticketId: string, overrides: Partial<TicketJobRequest> = {}): TicketJobRequest {
  const sample = sampleJobRequest(jobId);
  return { ...sample, ticket: { ...sample.ticket, id: ticketId }, ...overrides };
}

/**
 * A ticket whose first offline draft the judge fails as off_topic: the retrieved rate-limit
 * passages cover few of the question's words (batch, backoff, quota…). The revision names the
 * question's terms and passes.
 */
function rateLimitJob(jobId: string, ticketId: string, overrides: Partial<TicketJobRequest> = {}): TicketJobRequest {
  return refundJob(jobId, ticketId, {
    ticket: {
      id: ticketId,
      customer_id: 'cus_41',
      subject: 'API',
      body: 'Our nightly batch job hits 429 errors, should we add exponential backoff or ask for a higher quota?',
      channel: 'email',
    },
    budget: { usd: 1, revisions: 2 },
    ...overrides,
  });
}

/**
 * Waits for the escalation through the HandrailStatus search attribute rather than the status
 * query, so recording never sends queries: a query once left a history that failed replay
 * (docs/replay.md, "Known problem"), and a recorder that does not query cannot record such a shape.
 */
async function untilEscalated(handle: JobHandle, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const described = await handle.describe();
    const status = described.typedSearchAttributes.get(HandrailStatus);
    if (status === 'escalated') return;
    if (described.status.name !== 'RUNNING')
      throw new Error(`job ${handle.workflowId} ended ${described.status.name} before escalating`);
    if (Date.now() > deadline) throw new Error(`job ${handle.workflowId} did not escalate within ${timeoutMs / 1000}s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function job(
  rail: ScenarioRail,
  request: JobRequest,
  steer?: (handle: JobHandle) => Promise<void>,
): Promise<ScenarioRun> {
  const { handle } = await startJob(rail.client, request, rail);
  await steer?.(handle);
  return { workflowId: request.job_id, result: await handle.result() };
}

async function stageHop(rail: ScenarioRail, request: StageHopRequest, workflowId: string): Promise<StageHopResult> {
  return rail.client.workflow.execute<(r: StageHopRequest) => Promise<StageHopResult>>('stageHop', {
    taskQueue: rail.taskQueue,
    workflowId,
    args: [request],
  });
}

/** Delivers a fresh refund ticket through intake → judge, one stageHop each: the package writeback gets. */
async function relayToWriteback(rail: ScenarioRail, jobId: string, ticketId: string): Promise<HandoffV1> {
  let pkg = firstPackage(refundJob(jobId, ticketId), TRACE, ticketTriage);
  for (const stage of ['intake', 'retrieve', 'draft', 'judge']) {
    const hop = await stageHop(rail, { stage, package: pkg }, `${jobId}-${stage}`);
    if (hop.ack.ack !== 'accepted' || !hop.package)
      throw new Error(`relay: ${stage} acked ${hop.ack.ack}: ${hop.ack.reason}`);
    pkg = hop.package;
  }
  return pkg;
}

/**
 * A stage held at work until its scenario lets it go: `hold` (in the activity) tells the run it
 * has started and waits; the run acts, then `release`s. One run at a time: the recorder and the
 * results test run scenarios one after another.
 */
class HeldStage {
  private gate?: { started: () => void; released: Promise<void> };

  /** Arms the gate for one run; resolves once the stage has started, with the release. */
  arm(): { started: Promise<void>; release: () => void } {
    let started!: () => void;
    let release!: () => void;
    const startedP = new Promise<void>((resolve) => (started = resolve));
    this.gate = { started, released: new Promise<void>((resolve) => (release = resolve)) };
    return { started: startedP, release };
  }

  async hold(): Promise<void> {
    const gate = this.gate;
    gate?.started();
    await gate?.released;
  }
}

const heldWriteback = new HeldStage();

const isJob = (r: ScenarioRun['result']): r is JobResult => 'status' in r;
const ackTrail = (r: JobResult) => r.acks.map((a) => `${a.stage}:${a.ack}`);

/** A job result that ended `status` and whose acks include every `acks` entry, in any order. */
function jobEnded(status: JobResult['status'], acks: string[] = []): Scenario['check'] {
  return (result) => {
    if (!isJob(result)) return 'expected a JobResult';
    if (result.status !== status) return `ended ${result.status} (${result.reason ?? ''}), expected ${status}`;
    const missing = acks.filter((a) => !ackTrail(result).includes(a));
    return missing.length > 0 ? `no ${missing.join(', ')} among the acks ${ackTrail(result).join(' ')}` : undefined;
  };
}

function hopAcked(ack: string): Scenario['check'] {
  return (result) =>
    isJob(result)
      ? 'expected a StageHopResult'
      : result.ack.ack === ack
        ? undefined
        : `acked ${result.ack.ack}, expected ${ack}`;
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'happy-path',
    summary: 'a refund ticket relays intake → retrieve → draft → judge (pass) → writeback',
    run: (rail, jobId) => job(rail, refundJob(jobId, 'tkt_happy')),
    check: jobEnded('completed', ['judge:accepted', 'writeback:accepted']),
  },
  {
    name: 'continued-as-new',
    summary:
      'the happy path with a low continue-as-new threshold (20 events): the job hands on to a new run mid-relay, which completes it (the history is the last run, started with the carried state)',
    run: (rail, jobId) => job(rail, refundJob(jobId, 'tkt_continued', { continue_after: { events: 20 } })),
    check: jobEnded('completed', ['intake:accepted', 'judge:accepted', 'writeback:accepted']),
  },
  {
    name: 'revise-then-pass',
    summary: 'the judge fails the first draft as off_topic; one revision passes and is written back',
    run: (rail, jobId) => job(rail, rateLimitJob(jobId, 'tkt_revise')),
    check: (result) =>
      jobEnded('completed', ['writeback:accepted'])(result) ??
      (isJob(result) && result.package.budget.revisions_remaining === 1
        ? undefined
        : 'expected exactly one revision spent'),
  },
  {
    name: 'revisions-exhausted',
    summary: 'the same failing first draft with no revisions in the wallet escalates; nobody decides within 1s',
    run: (rail, jobId) =>
      job(rail, rateLimitJob(jobId, 'tkt_exhausted', { budget: { usd: 1, revisions: 0 }, decision_timeout: '1s' })),
    check: (result) =>
      jobEnded('escalated')(result) ??
      (isJob(result) && /revisions exhausted/.test(result.reason ?? '')
        ? undefined
        : 'expected the revisions-exhausted escalation'),
  },
  {
    name: 'human-approve',
    summary: 'the hop cap (3) escalates before writeback; ops.lead approves and the job completes',
    run: (rail, jobId) =>
      job(rail, refundJob(jobId, 'tkt_approve', { max_hops: 3 }), async (handle) => {
        await untilEscalated(handle);
        await handle.executeUpdate(decideUpdate, {
          args: [{ action: 'approve', actor: 'ops.lead', note: 'fine to write' }],
        });
      }),
    check: jobEnded('completed', ['writeback:max_hops_exceeded', 'writeback:accepted']),
  },
  {
    name: 'human-top-up',
    summary: 'a $0.005 wallet is refused at draft (rejected_budget); ops.lead tops up $1 and the job completes',
    run: (rail, jobId) =>
      job(rail, refundJob(jobId, 'tkt_topup', { budget: { usd: 0.005, revisions: 1 } }), async (handle) => {
        await untilEscalated(handle);
        await handle.executeUpdate(decideUpdate, { args: [{ action: 'top_up', actor: 'ops.lead', usd: 1 }] });
      }),
    check: jobEnded('completed', ['draft:rejected_budget', 'writeback:accepted']),
  },
  {
    name: 'rejected-schema-at-intake',
    summary:
      'a valid request whose ticket does not fit a package (its data: URI is over the URI cap) is rejected_schema before any stage work',
    run: async (rail, jobId) => {
      // Each field is within the request's limits; together they are not a package the rail takes.
      const base = refundJob(jobId, 'tkt_schema', { decision_timeout: '1s' });
      // 7,900 euro signs are 71 kB percent-encoded: within the ticket's limit, over an artifact URI's.
      const request = { ...base, ticket: { ...base.ticket, body: `Refund? ${'€'.repeat(7900)}` } };
      const handle = await rail.client.workflow.start('handoffJob', {
        taskQueue: rail.taskQueue,
        workflowId: jobId,
        args: [request],
      });
      return { workflowId: jobId, result: (await handle.result()) as JobResult };
    },
    check: jobEnded('escalated', ['intake:rejected_schema']),
  },
  {
    name: 'empty-wallet',
    summary: 'a passing package delivered to writeback with usd_remaining 0 is rejected_budget; nothing is written',
    run: async (rail, jobId) => {
      const passed = await relayToWriteback(rail, jobId, 'tkt_broke');
      const workflowId = `${jobId}-writeback`;
      return {
        workflowId,
        result: await stageHop(
          rail,
          { stage: 'writeback', package: { ...passed, budget: { ...passed.budget, usd_remaining: 0 } } },
          workflowId,
        ),
      };
    },
    check: hopAcked('rejected_budget'),
  },
  {
    name: 'stage-hop-writeback',
    summary:
      'a passing package delivered once to writeback through stageHop is accepted and written: the one delivery a caller makes most',
    run: async (rail, jobId) => {
      const passed = await relayToWriteback(rail, jobId, 'tkt_once');
      const workflowId = `${jobId}-writeback`;
      return { workflowId, result: await stageHop(rail, { stage: 'writeback', package: passed }, workflowId) };
    },
    check: (result) =>
      hopAcked('accepted')(result) ??
      (!isJob(result) && result.artifact?.type === 'receipt.v1' ? undefined : 'expected the receipt'),
  },
  {
    name: 'duplicate-delivery',
    summary:
      'the same writeback package delivered twice through stageHop: the second is acked duplicate with the first receipt',
    run: async (rail, jobId) => {
      const passed = await relayToWriteback(rail, jobId, 'tkt_dup');
      await stageHop(rail, { stage: 'writeback', package: passed }, `${jobId}-writeback`);
      const workflowId = `${jobId}-writeback-again`;
      return { workflowId, result: await stageHop(rail, { stage: 'writeback', package: passed }, workflowId) };
    },
    check: hopAcked('duplicate'),
  },
  {
    name: 'hop-cap',
    summary: 'the hop cap (3) escalates before writeback; ops.lead rejects and the job ends rejected',
    run: (rail, jobId) =>
      job(rail, refundJob(jobId, 'tkt_hopcap', { max_hops: 3 }), async (handle) => {
        await untilEscalated(handle);
        await handle.executeUpdate(decideUpdate, {
          args: [{ action: 'reject', actor: 'ops.lead', note: 'too many hops for a refund question' }],
        });
      }),
    check: jobEnded('rejected', ['writeback:max_hops_exceeded']),
  },
  {
    name: 'support-routing-handover',
    summary:
      'an angry ticket through support-routing: classify hands its turn to escalation as a transcript (transcript_prepend), review starts clean, crm-note writes',
    run: (rail, jobId) =>
      job(
        rail,
        refundJob(jobId, 'tkt_handover', {
          pipeline: 'support-routing',
          ticket: {
            id: 'tkt_handover',
            customer_id: 'cus_77',
            subject: 'Logged out AGAIN',
            body: 'This is UNACCEPTABLE!! The app logs me out every hour. Why is this still broken?',
          },
        }),
      ),
    check: (result) =>
      jobEnded('completed', ['escalation:accepted', 'crm-note:accepted'])(result) ??
      (isJob(result) && result.package.memory_refs.some(isTranscriptUri)
        ? undefined
        : 'expected the job log referenced from memory_refs'),
  },
  {
    name: 'hub-branch-top-up',
    summary:
      "ticket-hub with a $0.006 wallet: policy and account fan out after intake; account's reservation does not fit beside policy's (rejected_budget), the hub escalates naming it; ops.lead tops up $1, account runs alone, the merge and the rest complete (a customer with no earlier tickets, so every run is alike)",
    run: (rail, jobId) =>
      job(
        rail,
        refundJob(jobId, 'tkt_hub', {
          pipeline: 'ticket-hub',
          budget: { usd: 0.006, revisions: 1 },
          ticket: { ...sampleJobRequest(jobId).ticket, id: 'tkt_hub', customer_id: 'cus_hub' },
        }),
        async (handle) => {
          await untilEscalated(handle);
          await handle.executeUpdate(decideUpdate, { args: [{ action: 'top_up', actor: 'ops.lead', usd: 1 }] });
        },
      ),
    check: jobEnded('completed', ['account:rejected_budget', 'merge:accepted', 'writeback:accepted']),
  },
  {
    name: 'cancel-during-write',
    summary:
      'a job is cancelled while its writeback runs: the write (not cancellable) finishes, and the job ends cancelled with its receipt',
    activities: (real) => ({
      writeback: async (work) => {
        await heldWriteback.hold();
        return real.writeback(work);
      },
    }),
    run: async (rail, jobId) => {
      const writeback = heldWriteback.arm();
      try {
        return await job(rail, refundJob(jobId, 'tkt_cancel_write'), async (handle) => {
          await writeback.started;
          // Returns once the cancellation is in the job's history: the write ends after it.
          await handle.cancel();
          writeback.release();
        });
      } finally {
        writeback.release();
      }
    },
    check: (result) =>
      jobEnded('cancelled', ['writeback:accepted'])(result) ??
      (isJob(result) && result.receipt ? undefined : 'expected the receipt of the finished write'),
  },
  {
    name: 'fork-edited-draft',
    summary:
      'a refund job forked from hop 2 with its draft edited: the judge runs again on the edit, and the fork writes once under its own id on evidence re-recorded for it',
    run: async (rail, jobId) => {
      const store = rail.store;
      if (!store) throw new Error("the fork scenario reads the parent's snapshots from the worker's store");
      const parentId = `${jobId}-parent`;
      await job(rail, refundJob(parentId, 'tkt_fork'));
      const at = async (hop: number) =>
        (await hopSnapshots(rail.client, store, parentId, hop))[0]!.package as HandoffV1;
      const draft = (await at(3)).artifacts.find((a) => a.type === 'summary_md')!;
      const body = JSON.parse((await readArtifactText(store, draft)).text) as { markdown: string };
      const edited: Artifact = {
        type: 'summary_md',
        uri: `data:application/json,${encodeURIComponent(JSON.stringify({ ...body, markdown: `${body.markdown}\n\nThank you for your patience.` }))}`,
      };
      const from = await at(2);
      const { handle } = await forkJob(rail.client, store, parentId, 2, {
        ...rail,
        jobId,
        package: { ...from, artifacts: [...from.artifacts, edited] },
      });
      return { workflowId: jobId, result: await handle.result() };
    },
    check: jobEnded('completed', ['judge:accepted', 'writeback:accepted']),
  },
  {
    name: 'cancellation',
    summary: 'a job waiting on a human after rejected_budget is cancelled by an operator; no write',
    run: (rail, jobId) =>
      job(rail, refundJob(jobId, 'tkt_cancel', { budget: { usd: 0.005, revisions: 1 } }), async (handle) => {
        await untilEscalated(handle);
        await handle.cancel();
      }),
    check: jobEnded('cancelled', ['draft:rejected_budget']),
  },
  ...(['approve', 'deny'] as const).map((verdict): Scenario => ({
    name: `tool-call-${verdict === 'approve' ? 'approved' : 'denied'}`,
    summary: `draft's loop stops at a kb.search call that waits for a human (ToolApprovalRequired); ops.lead ${verdict === 'approve' ? 'approves' : 'denies'} it by its digest and the resumed draft completes the job`,
    activities: (real) => ({ draft: (work) => askingDraft.deliver(work, real.draft) }),
    run: (rail, jobId) =>
      job(rail, refundJob(jobId, `tkt_call_${verdict}`), async (handle) => {
        await untilEscalated(handle);
        await handle.executeUpdate(decideUpdate, {
          args: [
            {
              action: 'approve',
              actor: 'ops.lead',
              note: verdict === 'approve' ? 'search away' : 'not that index',
              tool_call: { digest: askingDraft.digest(jobId), verdict },
            },
          ],
        });
      }),
    check: (result) =>
      jobEnded('completed', ['draft:accepted', 'writeback:accepted'])(result) ??
      (isJob(result) && result.acks.some((a) => a.actor === 'ops.lead' && a.reason.includes(`decided approve`))
        ? undefined
        : "expected ops.lead's decision among the acks"),
  })),
];

/**
 * A result with its run-specific values replaced, so two runs of a scenario compare equal:
 * - the job id (it appears in delivery keys, idempotency keys and workflow ids) → `<job_id>`;
 * - ack and write times (`at`, `written_at`) → `<time>`: wall-clock of the run;
 * - traceparents → `<trace-1>`, `<trace-2>`… by first appearance: a job draws a random one, and
 *   numbering keeps "every ack carries the job's trace" visible;
 * - the receipt artifact's uri/hash → `<receipt>`: the receipt holds `written_at`;
 * - transcript URIs → `<transcript-1>`… by first appearance: a turn record names its job, so its
 *   address differs per job id;
 * - snapshot URIs → `<snapshot-1>`… by first appearance: a snapshot holds its ack's time.
 * Everything else (artifact hashes of intake, chunks, drafts, verdicts; costs; reasons) is
 * deterministic for the offline stages and stays as recorded.
 */
export function normalizeResult(result: ScenarioRun['result'], jobId: string): unknown {
  const traces = new Map<string, string>();
  const transcripts = new Map<string, string>();
  const snapshots = new Map<string, string>();
  // A tool call's digest covers its delivery key, which names the job: numbered like the others.
  const digests = new Map<string, string>();
  const numbered = (seen: Map<string, string>, value: string, what: string) => {
    if (!seen.has(value)) seen.set(value, `<${what}-${seen.size + 1}>`);
    return seen.get(value)!;
  };
  const walk = (value: unknown, key?: string): unknown => {
    if (typeof value === 'string') {
      if (key === 'at' || key === 'written_at') return '<time>';
      if (key === 'traceparent') return numbered(traces, value, 'trace');
      if (key === 'digest') return numbered(digests, value, 'tool-call');
      if (isTranscriptUri(value)) return numbered(transcripts, value, 'transcript');
      if (isSnapshotUri(value)) return numbered(snapshots, value, 'snapshot');
      return value.split(jobId).join('<job_id>');
    }
    if (Array.isArray(value)) return value.map((v) => walk(v));
    if (value && typeof value === 'object') {
      const obj = value as Record<string, unknown>;
      if (obj.type === 'receipt.v1' && typeof obj.uri === 'string')
        return { ...obj, uri: '<receipt>', ...(obj.hash ? { hash: '<receipt>' } : {}) };
      return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, walk(v, k)]));
    }
    return value;
  };
  return walk(result);
}

/**
 * A draft stage whose loop asks a human before its one kb.search call: a delivery without a word
 * on the call stops at it (ToolApprovalRequired, the call in its details, as a model stage's loop
 * reports it); the delivery the rail sends with the word does the draft's real work. The digest
 * is the one the rail computes (the call's first delivery key is the rail's, so the scenario knows it).
 */
const askingDraft = {
  call: { name: 'kb.search', call_id: 'call_1', args: { query: 'duplicate charge refund' } },
  keys: new Map<string, string>(),
  digest(jobId: string): string {
    const resume = this.keys.get(jobId);
    if (!resume) throw new Error(`no draft of ${jobId} stopped at its call`);
    return toolCallDigest({ ...this.call, resume_key: resume });
  },
  async deliver(work: StageWork, draft: (work: StageWork) => Promise<StageResult>): Promise<StageResult> {
    if (work.hook_results?.some((h) => h.event === TOOL_APPROVAL_DECIDED)) return draft(work);
    this.keys.set(work.package.job_id, work.delivery_key);
    const tool_call = { ...this.call, resume_key: work.delivery_key };
    throw ApplicationFailure.nonRetryable(
      'draft: the model called kb.search, which waits for a human',
      'ToolApprovalRequired',
      {
        tool_call: { ...tool_call, digest: toolCallDigest(tool_call) },
      },
    );
  },
};
