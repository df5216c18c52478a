/**
 * Every patch the rail has taken (docs/replay.md), oldest first, and how the rail asks for one.
 *
 * Patch `rail-2026-12` (2026-12-02) consolidates the ones before it: a run started on this code
 * records that one marker and takes every branch it includes (GENERATIONS), instead of a marker for
 * each — and sdk-core adds a `TemporalChangeVersion` upsert to every marker, so each patch asked
 * cost two history events. A five-hop job asked three (`validate-request`,
 * `prior-delivery-activity`, `lean-rail`): 4 events fewer. It is asked before any of them in a
 * run, so a history recorded before it (without its marker) asks each patch as it did
 * (test/histories/before-rail-2026-12.*). A patch added later is asked on its own, or comes with
 * a later generation (`rail-2026-12-04`), which includes every patch of the one before, so a new
 * run still records one marker.
 */
import { patched } from '@temporalio/workflow';

/** Patch `publish-after-decision` (2026-11-30): a decided escalation publishes the job's status
 * at once. Histories recorded before it (test/histories/before-publish-after-decision.*) replay
 * through the branch without the upsert. */
export const PUBLISH_AFTER_DECISION_PATCH = 'publish-after-decision';

/** Patch `validate-request` (2026-12-01): the workflow checks its own input (never assume the
 * caller used our client) and that it runs under its own job id. Before it, a request started
 * around the client ran as given (test/histories/before-validate-request.*, recorded before the
 * pipelines too). */
export const VALIDATE_REQUEST_PATCH = 'validate-request';

/** Patch `handoff-records` (2026-12-01): an escalation begins a handoff record and the job's end
 * (or its decision) closes it. Histories recorded before it (test/histories/before-handoff-records.*)
 * replay without the two activities. */
export const HANDOFF_RECORDS_PATCH = 'handoff-records';

/**
 * Patch `prior-delivery-activity` (2026-11-29). The duplicate lookup used to be a local activity
 * on every hop. A query arriving while it ran could close a workflow task on the local-activity
 * marker alone, and SDK 1.24 then failed to replay that history on the very code that wrote it
 * (test/histories/known-problems). Now `handoffJob` skips the lookup — its delivery keys are
 * unique by construction, and a retried stage activity returns its recorded result anyway — and
 * `stageHop`, whose deliveries come from outside, looks up with an ordinary activity.
 * Histories recorded before the patch replay through the old branch; it goes with the others
 * consolidated under `rail-2026-12` (docs/replay.md, the eighth patch).
 */
export const PRIOR_DELIVERY_PATCH = 'prior-delivery-activity';

/**
 * Patch `no-progress` (2026-12-01). A hop whose output repeats an earlier artifact, or whose
 * critic fails the work for the same reasons twice in a row, is acked `no_progress` and the job
 * escalates — before, a repeated artifact was `rejected_invariant` and a repeated verdict sent
 * the work round again until the wallet's revisions or the hop cap ran out. Checked only when the
 * hop made no progress, so the marker appears in those histories alone; older histories replay
 * through the old branch.
 */
export const NO_PROGRESS_PATCH = 'no-progress';

/**
 * Patch `settle-at-reservation` (2026-12-01). A stage that reports more than its hop reserved is
 * charged the reservation and the rest is its overspend — before, the whole report was charged,
 * down to an empty wallet. Asked only when a report exceeds its reservation, so only those
 * histories carry the marker; older ones replay through the old branch.
 */
export const SETTLE_AT_RESERVATION_PATCH = 'settle-at-reservation';

/**
 * Patch `lean-rail` (2026-12-01): two changes landed together, each leaving less in history, under
 * one marker. (1) The first stage is asked to move the job's inline entry to the store and
 * pass its reference on (contracts/entry.ts), so no later package, activity input or result
 * carries it; asked while the entry is inline, so a worker of an older build (whose rail would
 * refuse the moved entry) fails the task on the marker instead of running the job. (2) `handoffJob`
 * upserts only the search attributes that changed, once per hop (workflows/handoff-job.ts).
 * Histories recorded before (test/histories/before-lean-rail.*) replay through the old branches.
 */
export const LEAN_RAIL_PATCH = 'lean-rail';

export const RAIL_2026_12_PATCH = 'rail-2026-12';

/**
 * Patch `start-attributes` (2026-12-04): a job takes the search attributes it was started with as
 * published already (`startJob` sets the first ones), so its first hop upserts only what differs —
 * one event fewer per job started by the client. Taken through the generation `rail-2026-12-04`,
 * so it costs no marker of its own: a new run records that generation's marker, and a run
 * recorded before it takes the old branch (`handoffJob` asks at its start, in the first workflow
 * task, which such a run has already recorded, so the replay finds no marker and records none).
 * Those histories (test/histories/before-rail-2026-12-04.*) replay with the first hop's full upsert.
 */
export const START_ATTRIBUTES_PATCH = 'start-attributes';

/**
 * Patch `final-status-once` (2026-12-04): a job cancelled while its write ran (the write is not
 * cancellable) publishes `HandrailStatus=cancelled` alone. Before, it published `completed` and
 * then `cancelled` in the same workflow task: two upserts, and visibility said `completed` for a
 * moment. Now `finish` waits for running handlers and a cancelled scope before it publishes, so a
 * cancellation throws before the ending it will not have is published. In `rail-2026-12-04`; a run
 * from before asks it on its own at its end, only when a handler still runs or its scope is
 * cancelled (test/histories/before-rail-2026-12-04.cancel-during-write.json).
 */
export const FINAL_STATUS_ONCE_PATCH = 'final-status-once';

/** Patch `rail-2026-12-04`: the generation after `rail-2026-12`, its patches, `start-attributes` and `final-status-once`. */
export const RAIL_2026_12_04_PATCH = 'rail-2026-12-04';

/**
 * Patch `stage-lookup` (2026-12-03). A `stageHop` delivery the rail would accept, or refuse for a
 * reason ordered before `duplicate`, no longer waits for a separate `priorDelivery` activity: the
 * stage's own activity looks the delivery key up before any work and the rail acks what it finds
 * (workflows/rail/ack.ts `needsLookupFirst`) — one activity and 6 events fewer per new delivery
 * (a repeat is 14 events either way). A delivery the hop cap, a cycle or the wallet would refuse
 * still looks up first, so a repeat is still `duplicate` there, and asks no patch. Asked on its
 * own, not through `rail-2026-12`, whose marker a delivery then needs only for a branch of its
 * own. Histories recorded before it (test/histories/before-stage-lookup.*) replay through the
 * lookup.
 */
export const STAGE_LOOKUP_PATCH = 'stage-lookup';

const RAIL_2026_12 = [
  PUBLISH_AFTER_DECISION_PATCH,
  VALIDATE_REQUEST_PATCH,
  HANDOFF_RECORDS_PATCH,
  PRIOR_DELIVERY_PATCH,
  NO_PROGRESS_PATCH,
  SETTLE_AT_RESERVATION_PATCH,
  LEAN_RAIL_PATCH,
];

/** The consolidations, newest first, each with every patch it includes. A new run records the
 * newest one's marker alone; a run recorded under an older one (or none) finds that one's marker
 * (or none) and takes the branches it had. A generation's list is frozen once any worker has run
 * it: a patch added later goes on its own or into a new generation. */
const GENERATIONS: readonly { patch: string; includes: ReadonlySet<string> }[] = [
  { patch: RAIL_2026_12_04_PATCH, includes: new Set([...RAIL_2026_12, START_ATTRIBUTES_PATCH, FINAL_STATUS_ONCE_PATCH]) },
  { patch: RAIL_2026_12_PATCH, includes: new Set(RAIL_2026_12) },
];

// Module state is the run's own: the SDK evaluates this module for every workflow run (it is not
// among the bundle's shared modules, src/worker/bundle.ts).
let generation: ReadonlySet<string> | null | undefined;

/** `patched(patch)`, through the consolidations: asks for them at the run's first patch, newest
 * first (in a replay, asking for one whose marker the history lacks records nothing). */
export function railPatched(patch: string): boolean {
  generation ??= GENERATIONS.find((g) => patched(g.patch))?.includes ?? null;
  return generation?.has(patch) === true || patched(patch);
}
