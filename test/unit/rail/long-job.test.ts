/**
 * A long job's package stays bounded: the hop chain keeps its newest entries (and what cycle
 * detection and revisit bounds need of the older ones), and the rail moves superseded artifacts
 * off the package behind a snapshot reference. Every invariant still holds a stage to the rule.
 */
import { describe, expect, it } from 'vitest';
import {
  HUMAN,
  Hop,
  LIMITS,
  handoffV1,
  movedByStage,
  outputKey,
  type Artifact,
  type HandoffV1,
  type RevisitEdge,
} from '../../../contracts';
import { ticketTriage } from '../../../contracts/pipelines/ticket-triage';
import { foldArtifacts } from '../../../workflows/rail/earlier-artifacts';
import { chainLength, deliveryKey, isCycle, keptChain, nextHop } from '../../../workflows/rail/hop-chain';
import { checkEmitted, type EmittedOutput } from '../../../workflows/rail/invariants';
import { mergeHop } from '../../../workflows/rail/merge';
import {
  CHUNKS,
  INTAKE,
  SUMMARY,
  SUMMARY_2,
  TICKET,
  VERDICT,
  artifactBody,
  at,
  card,
  delivered,
  emit,
  ref,
  relayHop,
} from './helpers';

/** `intake`, then `rounds` times draft → judge, as one long relay. */
const loop = (rounds: number) => ['intake', ...Array.from({ length: rounds }, () => ['draft', 'judge']).flat()];
/** The same hop with its whole chain on it, as if nothing ever left it. */
function unbounded(path: readonly string[]): Hop {
  const hop = relayHop(path)!;
  return { ...hop, chain: ['client', ...path], earlier: undefined };
}

describe('a long hop chain', () => {
  const path = loop(1000);
  const hop = relayHop(path)!;

  it('keeps its newest LIMITS.chain entries and counts every delivery, so delivery keys never repeat', () => {
    expect(hop.chain).toHaveLength(LIMITS.chain);
    expect(hop.chain).toEqual(['client', ...path].slice(-LIMITS.chain));
    expect(hop.count).toBe(path.length - 1);
    expect(chainLength(hop)).toBe(path.length + 1);
    expect(hop.earlier).toEqual({
      entries: path.length + 1 - LIMITS.chain,
      stages: ['client', 'intake', 'draft', 'judge'],
      edges: expect.any(Array),
    });
    expect(Hop.safeParse(hop).success).toBe(true);
    const pkg = { job_id: 'job-long', hop };
    expect(deliveryKey(pkg, 'draft')).toBe(`job-long:draft:${path.length + 1}`);
    expect(deliveryKey({ ...pkg, hop: nextHop(hop, 'draft', 'again') }, 'draft')).toBe(
      `job-long:draft:${path.length + 2}`,
    );
  });

  it('counts each pair of stages once, the pair across the cut included', () => {
    const times = (from: string, to: string) =>
      (hop.earlier?.edges.find((e) => e.from === from && e.to === to)?.times ?? 0) +
      hop.chain.slice(1).filter((s, i) => hop.chain[i] === from && s === to).length;
    expect(times('draft', 'judge')).toBe(1000);
    expect(times('judge', 'draft')).toBe(999);
    expect(times('intake', 'draft')).toBe(1);
    expect(times('client', 'intake')).toBe(1);
  });

  it('still calls a revisit of a stage that only the older entries name a cycle', () => {
    const back = nextHop(hop, 'intake', 'back to intake');
    expect(back.chain.slice(0, -1)).not.toContain('intake');
    expect(isCycle(back, ticketTriage.revisits)).toBe(true);
    // A human may still send the work anywhere.
    expect(isCycle(nextHop(nextHop(hop, HUMAN, 'x'), 'intake', 'resume', HUMAN), ticketTriage.revisits)).toBe(false);
  });

  it('holds an edge bounded by { max: n } to n over the whole chain, not the entries kept', () => {
    const bounded: Required<RevisitEdge>[] = [
      { from: 'judge', to: 'draft', bound: { max: 1000 } },
      { from: 'draft', to: 'judge', bound: { max: 1000 } },
    ];
    // 999 judge → draft so far: the 1000th is allowed, the 1001st is a cycle.
    const thousandth = nextHop(hop, 'draft', 'revise');
    expect(isCycle(thousandth, bounded)).toBe(false);
    const next = nextHop(nextHop(thousandth, 'judge', 'judge'), 'draft', 'revise');
    expect(isCycle(next, bounded)).toBe(true);
    expect(isCycle({ ...next, earlier: undefined }, bounded)).toBe(false);
  });

  it('decides every hop of a random walk as the whole chain would', () => {
    const stages = ['a', 'b', 'c', 'd'];
    const revisits: Required<RevisitEdge>[] = [
      { from: 'b', to: 'a', bound: { max: 40 } },
      { from: 'c', to: 'b', bound: { max: 25 } },
      { from: 'd', to: 'a', bound: 'revisions' },
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % stages.length;
    const walk: string[] = [];
    for (let i = 0; i < 600; i++) {
      walk.push(stages[next()]!);
      expect(isCycle(relayHop(walk)!, revisits), `hop ${i}`).toBe(isCycle(unbounded(walk), revisits));
    }
  });

  it('keeps the merge step on a long chain and counts from the hub however many entries left meanwhile', () => {
    const rule = { fanOut: ['draft', 'judge'], reason: 'both' };
    const merged = mergeHop(hop, rule);
    expect(merged.chain.slice(-3)).toEqual(['draft', 'judge', 'merge']);
    expect(merged.chain).toHaveLength(LIMITS.chain);
    expect(chainLength(merged)).toBe(chainLength(hop) + 3);
  });

  it('is the whole chain while it fits', () => {
    const short = relayHop(['intake', 'retrieve'])!;
    expect(short.earlier).toBeUndefined();
    expect(keptChain(['client', 'x'], undefined, 1)).toEqual({
      chain: ['x'],
      earlier: { entries: 1, stages: ['client'], edges: [{ from: 'client', to: 'x', times: 1 }] },
    });
  });
});

describe('superseded artifacts leave a long package', () => {
  const snapshot = `handrail://snapshots/job-1/${'c'.repeat(64)}`;
  const drafts = Array.from({ length: LIMITS.artifactsKept }, (_, i) =>
    ref(i % 2 ? 'verdict.v1' : 'summary_md', (i % 16).toString(16)),
  ).map((a, i): Artifact => ({ ...a, uri: `${a.uri}-${i}` }));
  const long: HandoffV1 = { ...at.afterIntake(), artifacts: [TICKET, ...drafts] };
  const folded = foldArtifacts(long, { card: card('draft'), storedSnapshot: snapshot });

  it('keeps the entry and the newest of each type, and points at the snapshot that lists the rest', () => {
    expect(folded.artifacts).toEqual([TICKET, drafts.at(-2), drafts.at(-1)]);
    expect(folded.earlier_artifacts).toEqual({ count: LIMITS.artifactsKept - 2, snapshot });
    expect(handoffV1.safeParse(folded).success).toBe(true);
  });

  it('adds to the count on the next fold, pointing at the newer snapshot', () => {
    const more = { ...folded, artifacts: [...folded.artifacts, ...drafts] };
    const newer = snapshot.replace(/c{64}$/, 'd'.repeat(64));
    expect(foldArtifacts(more, { card: card('draft'), storedSnapshot: newer }).earlier_artifacts).toEqual({
      count: 2 * LIMITS.artifactsKept - 2,
      snapshot: newer,
    });
  });

  it('leaves a short package, one after a critic, and one without a stored snapshot as they are', () => {
    const short = at.afterDraft();
    expect(foldArtifacts(short, { card: card('draft'), storedSnapshot: snapshot })).toBe(short);
    expect(foldArtifacts(long, { card: card('judge'), storedSnapshot: snapshot })).toBe(long);
    expect(foldArtifacts(long, { card: card('draft'), storedSnapshot: undefined })).toBe(long);
  });
});

describe('invariants on a folded package', () => {
  const reference = { count: 30, snapshot: `handrail://snapshots/job-1/${'e'.repeat(64)}` };
  const before = delivered({ ...at.afterRetrieve(), earlier_artifacts: reference }, 'draft');
  const draft = (patch: Partial<HandoffV1> = {}): EmittedOutput => ({
    delivered: before,
    emitted: emit(before, SUMMARY, patch),
    artifact: SUMMARY,
    body: artifactBody('summary_md'),
    costUsd: 0.001,
    card: card('draft'),
  });
  const names = (o: EmittedOutput) => checkEmitted(o).map((v) => v.invariant);

  it('lets a stage that echoes the reference append its output', () => {
    expect(names(draft())).toEqual([]);
  });

  it('refuses a stage that drops or rewrites the reference', () => {
    expect(names(draft({ earlier_artifacts: undefined }))).toEqual(['earlier_artifacts_kept']);
    expect(names(draft({ earlier_artifacts: { ...reference, count: 1 } }))).toEqual(['earlier_artifacts_kept']);
  });

  it('refuses a stage that folds other than the contract says (it moved its input, and names no snapshot it was delivered)', () => {
    const [entry, , ...rest] = before.artifacts;
    const selfFolded = draft({
      artifacts: [entry!, ...rest, SUMMARY],
      earlier_artifacts: { ...reference, count: reference.count + 1 },
    });
    expect(names(selfFolded)).toEqual(['artifacts_append_only', 'earlier_artifacts_kept', 'output_declared']);
  });

  it("refuses a stage that rewrites what the chain's older entries held", () => {
    const long = { ...before, hop: relayHop([...loop(100), 'draft'])! };
    const forged = { ...long.hop!, earlier: { ...long.hop!.earlier!, edges: [] } };
    const o = { ...draft(), delivered: long, emitted: emit(long, SUMMARY, { hop: forged }) };
    expect(names(o)).toEqual(['hop_owned_by_rail']);
  });
});

describe("a stage's own fold of the package it emits", () => {
  const snapshot = `handrail://snapshots/job-1/${'5'.repeat(64)}`;
  const earlier = { count: 3, snapshot: `handrail://snapshots/job-1/${'4'.repeat(64)}` };
  // A revision: the judge failed the first draft; the drafter writes the second.
  const before = delivered({ ...at.afterJudge('fail'), earlier_artifacts: earlier, context_ref: snapshot }, 'draft');
  const folded = { count: earlier.count + 1, snapshot };
  const revision = (patch: Partial<HandoffV1>, over: Partial<EmittedOutput> = {}): EmittedOutput => ({
    delivered: before,
    emitted: emit(before, SUMMARY_2, patch),
    artifact: SUMMARY_2,
    body: artifactBody('summary_md'),
    costUsd: 0.001,
    card: card('draft'),
    foldSnapshot: snapshot,
    ...over,
  });
  const names = (o: EmittedOutput) => checkEmitted(o).map((v) => v.invariant);
  const exact = { artifacts: [TICKET, INTAKE, CHUNKS, VERDICT, SUMMARY_2], earlier_artifacts: folded };

  it('holds when it moved exactly the superseded artifacts behind the snapshot it was delivered', () => {
    expect(names(revision(exact))).toEqual([]);
  });

  it('still holds when it did not fold at all', () => {
    expect(names(revision({}))).toEqual([]);
  });

  it('is refused behind another snapshot, or with the rail naming none', () => {
    const elsewhere = { ...folded, snapshot: earlier.snapshot.replace(/4{64}$/, '6'.repeat(64)) };
    expect(names(revision({ ...exact, earlier_artifacts: elsewhere }))).toEqual([
      'artifacts_append_only',
      'earlier_artifacts_kept',
      'output_declared',
    ]);
    expect(names(revision(exact, { foldSnapshot: undefined }))).toContain('earlier_artifacts_kept');
  });

  it('is refused when it miscounts what it moved', () => {
    expect(names(revision({ ...exact, earlier_artifacts: { ...folded, count: folded.count + 1 } }))).toContain(
      'earlier_artifacts_kept',
    );
  });

  it('is refused when it moved an input a stage still reads (the newest of its type)', () => {
    const cut = { ...exact, artifacts: [TICKET, CHUNKS, VERDICT, SUMMARY_2] };
    expect(names(revision(cut))).toContain('artifacts_append_only');
  });

  it('is refused when it moved nothing but says it did', () => {
    const short = delivered({ ...at.afterRetrieve(), context_ref: snapshot }, 'draft');
    const o: EmittedOutput = {
      ...revision({}),
      delivered: short,
      emitted: emit(short, SUMMARY_2, { earlier_artifacts: { count: 1, snapshot } }),
    };
    expect(names(o)).toEqual(['earlier_artifacts_kept']);
  });

  it('leaves no_artifact_reuse whole: a revision may not repeat an output a stage moved off', () => {
    const repeated: EmittedOutput = {
      ...revision({}),
      emitted: emit(before, SUMMARY_2),
      earlierOutputs: new Set([SUMMARY_2.uri]),
    };
    expect(names(repeated)).toEqual(['no_artifact_reuse']);
    expect(names({ ...repeated, earlierOutputs: new Set([SUMMARY_2.hash!]) })).toEqual(['no_artifact_reuse']);
  });

  it('remembers a long URI by its sha256, so the memory a job carries stays small', () => {
    const long: Artifact = { type: 'summary_md', uri: `https://example.com/${'x'.repeat(2 * LIMITS.shortText)}` };
    const folding = delivered(
      { ...at.afterJudge('fail'), artifacts: [TICKET, INTAKE, CHUNKS, long, VERDICT], context_ref: snapshot },
      'draft',
    );
    const keys = movedByStage(folding, { ...folding, ...exact, earlier_artifacts: { count: 1, snapshot } });
    expect(keys).toEqual([outputKey(long.uri)]);
    expect(keys[0]!.length).toBeLessThan(100);
    const again: EmittedOutput = {
      ...revision({}),
      artifact: long,
      emitted: emit(before, long),
      earlierOutputs: new Set(keys),
    };
    expect(names(again)).toContain('no_artifact_reuse');
  });
});
