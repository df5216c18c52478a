/**
 * Chaos for writes (`npm run chaos -- --writes`): every job's writer pays through a payments API
 * that handrail does not own, one API per reconcile mode (`idempotent` honours the Idempotency-Key,
 * `lookup` and `none` do not). Each API, drawing from the run's seed, commits a payment and then
 * drops the connection, commits it and never answers (the writer times out), or drops the request
 * before committing; and it holds every committed payment's answer a moment, in which the chaos
 * SIGKILLs the worker: the write happened, and the worker died before it could note the answer. A
 * scripted human decides each write in doubt the `none` jobs escalate, from the API's own log: it
 * happened (with the payment's id) when the API holds one for its key, send it when not.
 * Then: no key paid twice, no `none` write resent without a human's word, every `none` write in
 * doubt escalated, every job ended, every receipt names the payment the API holds for its key.
 */
import type { Client } from '@temporalio/client';
import type { JobRequest, JobResult } from '../contracts';
import { writeKey, type ReconcileMode } from '../contracts/stages';
import { writebackStage } from '../contracts/pipelines/ticket-triage';
import { sampleJobRequest } from '../src/devtools/samples/tickets';
import {
  NETWORK_FAULTS,
  startPaymentsServer,
  type NetworkFault,
  type PaymentsServer,
} from '../src/devtools/payments-server';
import { isInDoubt, type EffectLedger } from '../src/worker/store/effects';
import { decideUpdate, statusQuery } from '../workflows/definitions';
import { newTraceparent, sleep } from './lab';
import type { PropertyCheck } from './load-shape';
import { MODES, PAYMENTS_ENV, payingJobId, reconcileOfJob } from './paying-worker';

export interface WriteChaosOptions {
  /** Faults to inject in all (each drawn at random; at most one per write key). */
  faults: number;
  /** Worker SIGKILLs, each while a committed payment's answer is held. */
  kills: number;
  jobs: number;
  /** Where kills and faults land: `drawn` from the seed over the run (the bench), or `first`, at the
   * first commits and write keys, so a loaded machine whose jobs commit late still gets every one
   * (the suite: a test that names a kill must not depend on timing luck). */
  landing?: Landing;
}

export type Landing = 'drawn' | 'first';

/**
 * Decides, one occasion at a time, whether a kill or a fault lands there: at most `budget` of them;
 * `first` takes the first occasions, `drawn` each with `chance` from the seed's `random`.
 */
export function landingChooser(landing: Landing, budget: number, chance: number, random: () => number) {
  let landed = 0;
  return (): boolean => {
    if (landed >= budget) return false;
    if (landing === 'drawn' && random() >= chance) return false;
    landed++;
    return true;
  };
}

/** How long a committed payment's answer is held: the kill's window between send and record. */
const HOLD_MS = 800;
/** The writer's HTTP timeout is 2 s (src/devtools/payments-writer.ts): a silent API outlasts it. */
const SILENT_MS = 4_000;

/** One mode's row of the table. */
export interface WriteModeRow {
  mode: ReconcileMode;
  jobs: number;
  completed: number;
  /** Payments the API made: the real remote writes. */
  remote_writes: number;
  /** Payments beyond the first under one write key. */
  duplicates: number;
  /** POSTs the API received. */
  requests: number;
  /** Writes the ledger found in doubt (settled since, or still in doubt). */
  in_doubt: number;
  /** Writes in doubt the jobs escalated to the human. */
  escalated: number;
  resolved_happened: number;
  resolved_send: number;
  /** `none` writes sent again with no human's "send it" (must stay 0). */
  blind_resends: number;
  /** SIGKILLs while one of this API's payments was held; of them, the ones whose writer was gone
   * before the answer (the API saw its connection close). */
  kills: number;
  kills_between_send_and_record: number;
  faults: Record<NetworkFault, number>;
}

export interface WriteChaosReport {
  rows: WriteModeRow[];
  /** Escalations that were not about a write in doubt (approved, counted, not a failure). */
  other_escalations: string[];
  checks: PropertyCheck[];
}

/** The payments APIs and the scripted human of a write-chaos run. */
export interface WriteChaos {
  /** The worker's environment: where its writer pays. */
  workerEnv: Record<string, string>;
  requests(prefix: string): JobRequest[];
  /** Kills the worker (and restarts it) when a payment commits, as the seed says, until the kills are spent. */
  armKills(kill: (() => Promise<void>) | undefined): void;
  /** Decides the escalations of the jobs on `taskQueue` until `stop`. */
  decide(
    client: Client,
    taskQueue: string,
    ledger: EffectLedger,
    note: (msg: string) => void,
  ): { stop(): Promise<void> };
  /** The table, and the write properties checked. */
  report(
    results: ReadonlyMap<string, JobResult>,
    requests: JobRequest[],
    ledger: EffectLedger,
  ): Promise<WriteChaosReport>;
  close(): Promise<void>;
}

interface ModeTally {
  kills: number;
  escalated: number;
  happened: number;
  send: number;
  /** Human "send it" words per write key. */
  sendsAllowed: Map<string, number>;
}

export async function startWriteChaos(opts: WriteChaosOptions, random: () => number): Promise<WriteChaos> {
  const landing = opts.landing ?? 'drawn';
  const faultLands = landingChooser(landing, opts.faults, Math.min(0.9, (1.25 * opts.faults) / opts.jobs), random);
  const killLands = landingChooser(landing, opts.kills, Math.min(0.9, (1.25 * opts.kills) / opts.jobs), random);
  const faulted = new Set<string>();
  const chooseFault = (key: string | null): NetworkFault | undefined => {
    if (key === null || faulted.has(key) || !faultLands()) return undefined;
    faulted.add(key);
    return NETWORK_FAULTS[Math.floor(random() * NETWORK_FAULTS.length)];
  };
  const tally = new Map(
    MODES.map((m) => [m, { kills: 0, escalated: 0, happened: 0, send: 0, sendsAllowed: new Map() } as ModeTally]),
  );
  const others: string[] = [];
  const kill = { arm: undefined as undefined | (() => Promise<void>), busy: false };
  const onCommit = (mode: ReconcileMode) => () => {
    if (!kill.arm || kill.busy || !killLands()) return;
    kill.busy = true;
    tally.get(mode)!.kills++;
    void kill.arm().finally(() => (kill.busy = false));
  };
  const servers = new Map<ReconcileMode, PaymentsServer>();
  for (const mode of MODES)
    servers.set(
      mode,
      await startPaymentsServer({
        honoursIdempotencyKey: mode === 'idempotent',
        holdMs: HOLD_MS,
        silentMs: SILENT_MS,
        chooseFault,
        onCommit: onCommit(mode),
      }),
    );
  const urls = Object.fromEntries([...servers].map(([mode, s]) => [mode, s.url]));
  return {
    workerEnv: { [PAYMENTS_ENV]: JSON.stringify(urls) },
    requests: (prefix) => Array.from({ length: opts.jobs }, (_, i) => payingRequest(prefix, i)),
    armKills: (arm) => (kill.arm = arm),
    decide: (client, taskQueue, ledger, note) =>
      scriptedHuman(client, taskQueue, { servers, tally, others, ledger, note }),
    report: async (results, requests, ledger) => ({
      ...(await writeReport(results, requests, ledger, servers, tally)),
      other_escalations: others,
    }),
    async close() {
      for (const server of servers.values()) await server.close();
    },
  };
}

/** Jobs take the modes in turn (or `mode`); a long decision timeout, since the scripted human decides. */
export function payingRequest(prefix: string, i: number, mode: ReconcileMode = MODES[i % MODES.length]!): JobRequest {
  const jobId = payingJobId(prefix, i, mode);
  return { ...sampleJobRequest(jobId), decision_timeout: '30m', traceparent: newTraceparent() };
}

/** What the scripted human reads (the APIs' logs) and where it counts its decisions. */
interface Human {
  servers: ReadonlyMap<ReconcileMode, PaymentsServer>;
  tally: ReadonlyMap<ReconcileMode, ModeTally>;
  others: string[];
  /** The worker's effect ledger: whether a write is in doubt. */
  ledger: EffectLedger;
  note: (msg: string) => void;
}

/** Polls the open jobs' status; decides each escalation: a write in doubt from the API's log, anything else approved. */
function scriptedHuman(client: Client, taskQueue: string, human: Human): { stop(): Promise<void> } {
  let running = true;
  // Visibility lists the waiting jobs in one call: no per-job describe or query, which would load
  // a dev server already restarted and killed around, and a query waits for a live worker.
  const query = `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running' AND HandrailStatus = 'escalated'`;
  const loop = (async () => {
    while (running) {
      try {
        for await (const w of client.workflow.list({ query })) {
          if (!running) break;
          await decideOne(client, w.workflowId, human).catch(() => undefined); // decided already, or the server restarting
        }
      } catch {
        // The server restarting: listed again next round.
      }
      await sleep(2_000);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** Decides `jobId`'s escalation: a `none` write in doubt (the ledger holds its intent and no
 * outcome) from the API's log, anything else approved as it is. */
async function decideOne(client: Client, jobId: string, human: Human): Promise<void> {
  // A job that pays no API (the soak's CRM writers) is left to its own decision timeout.
  if (!MODES.some((m) => jobId.includes(`-${m}-job`))) return;
  const handle = client.workflow.getHandle(jobId);
  const mode = reconcileOfJob(jobId);
  const key = writeKey(jobId, writebackStage);
  const entry = await human.ledger.findEffect(key);
  if (mode !== 'none' || entry === null || !isInDoubt(entry)) {
    const view = await handle.query(statusQuery);
    if (!view.escalation) return;
    const reasons = view.escalation.reasons.join('; ');
    await handle.executeUpdate(decideUpdate, { args: [{ action: 'approve', actor: 'chaos.human' }] });
    human.others.push(`${jobId}: ${reasons.slice(0, 160)}`);
    human.note(`${jobId}: escalated (${reasons.slice(0, 120)}); approved`);
    return;
  }
  const paid = human.servers.get(mode)!.payments.find((p) => p.client_reference === key);
  await handle.executeUpdate(decideUpdate, {
    args: [{ action: 'approve', actor: 'chaos.human', in_doubt: paid ? { happened: paid.id } : { send: true } }],
  });
  const t = human.tally.get(mode)!;
  t.escalated++;
  if (paid) t.happened++;
  else {
    t.send++;
    t.sendsAllowed.set(key, (t.sendsAllowed.get(key) ?? 0) + 1);
  }
}

async function writeReport(
  results: ReadonlyMap<string, JobResult>,
  requests: JobRequest[],
  ledger: EffectLedger,
  servers: ReadonlyMap<ReconcileMode, PaymentsServer>,
  tally: ReadonlyMap<ReconcileMode, ModeTally>,
): Promise<Omit<WriteChaosReport, 'other_escalations'>> {
  const rows: WriteModeRow[] = [];
  const offenders = {
    duplicates: [] as string[],
    blind: [] as string[],
    unescalated: [] as string[],
    receipts: [] as string[],
  };
  for (const mode of MODES) {
    const server = servers.get(mode)!;
    const t = tally.get(mode)!;
    const jobs = requests.map((r) => r.job_id).filter((id) => reconcileOfJob(id) === mode);
    const perKey = countBy(server.payments.map((p) => p.client_reference ?? '(none)'));
    const postsPerKey = countBy(server.requests.map((r) => r.client_reference ?? '(none)'));
    let inDoubt = 0;
    for (const jobId of jobs) {
      const key = writeKey(jobId, writebackStage);
      const entry = await ledger.findEffect(key);
      const doubted = entry !== null && (entry.resolution !== null || isInDoubt(entry));
      if (doubted) inDoubt++;
      if ((perKey.get(key) ?? 0) > 1) offenders.duplicates.push(`${key}: ${perKey.get(key)} payments`);
      const receipt = results.get(jobId)?.receipt;
      const held = server.payments.find((p) => p.client_reference === key);
      if (results.get(jobId)?.status === 'completed' && receipt?.reference !== held?.id)
        offenders.receipts.push(`${jobId}: receipt ${receipt?.reference ?? 'none'}, API holds ${held?.id ?? 'none'}`);
      if (mode !== 'none') continue;
      const resends = (postsPerKey.get(key) ?? 0) - 1 - (t.sendsAllowed.get(key) ?? 0);
      if (resends > 0) offenders.blind.push(`${key}: ${resends} sends without a human's word`);
      const humanSettled = entry?.resolution === 'human_happened' || entry?.resolution === 'human_send';
      if (doubted && !humanSettled) offenders.unescalated.push(`${key}: ${entry?.resolution ?? 'still in doubt'}`);
    }
    rows.push({
      mode,
      jobs: jobs.length,
      completed: jobs.filter((id) => results.get(id)?.status === 'completed').length,
      remote_writes: server.payments.length,
      duplicates: [...perKey.values()].reduce((n, c) => n + c - 1, 0),
      requests: server.requests.length,
      in_doubt: inDoubt,
      escalated: t.escalated,
      resolved_happened: t.happened,
      resolved_send: t.send,
      blind_resends: mode === 'none' ? offenders.blind.length : 0,
      kills: t.kills,
      kills_between_send_and_record: server.requests.filter(
        (r) => r.ending === 'client_gone' && r.fault !== 'timeout_after_commit',
      ).length,
      faults: Object.fromEntries(
        NETWORK_FAULTS.map((f) => [f, server.requests.filter((r) => r.fault === f).length]),
      ) as Record<NetworkFault, number>,
    });
  }
  const check = (name: string, found: string[]): PropertyCheck => ({
    name,
    ok: found.length === 0,
    detail: found.length === 0 ? 'none off' : found.slice(0, 5).join('; '),
  });
  const [idem, lookup, none] = MODES.map((m) => rows.find((r) => r.mode === m)!);
  return {
    rows,
    checks: [
      check(
        `0 duplicate remote writes (idempotent ${idem!.duplicates}, lookup ${lookup!.duplicates}, none ${none!.duplicates})`,
        offenders.duplicates,
      ),
      check(
        `none: 0 blind resends (${none!.requests} requests for ${none!.jobs} jobs, ${none!.resolved_send} human sends)`,
        offenders.blind,
      ),
      check(`none: every write in doubt (${none!.in_doubt}) escalated and settled by a human`, offenders.unescalated),
      check(
        `idempotent and lookup settle writes in doubt without a human (${idem!.escalated + lookup!.escalated} escalated)`,
        idem!.escalated + lookup!.escalated > 0
          ? ['an in-doubt write of an idempotent or lookup system escalated']
          : [],
      ),
      check('every completed job’s receipt names the payment its API holds for its key', offenders.receipts),
    ],
  };
}

function countBy(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}
