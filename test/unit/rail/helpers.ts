/**
 * Real packages for the rail's pure logic: every package here starts from a committed fixture
 * (the one the manifest names as rail-`accepted`), passes `validateHandoff`, and moves through the
 * reference stage cards the way `workflows/run-hop.ts` moves it (nextHop → decideAck → ackRecord).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  HANDOFF_V1,
  roleMismatch,
  validateHandoff,
  type Artifact,
  type HandoffV1,
  type Hop,
  type StageCard,
} from '../../../contracts';
import { ticketTriage } from '../../../contracts/pipelines/ticket-triage';
import { ackRecord, decideAck, type AckFacts } from '../../../workflows/rail/ack';
import { DEFAULT_MAX_HOPS, deliveryKey, nextHop } from '../../../workflows/rail/hop-chain';

export const root = resolve(__dirname, '../../..');
const readJson = (path: string): unknown => JSON.parse(readFileSync(join(root, path), 'utf8'));

export interface ManifestPackage {
  file: string;
  expect: 'accept' | 'reject';
  reason?: 'schema' | 'version' | 'size';
  path?: string;
  rail?: string;
}
export const manifest = readJson('contracts/fixtures/manifest.json') as { packages: ManifestPackage[] };
export const rawFixture = (file: string): unknown => readJson(`contracts/fixtures/${file}`);
export const artifactBody = (type: string): unknown => readJson(`contracts/fixtures/artifact-${type}.json`);

/** The fixture the manifest names as a valid package the rail accepts. */
export const VALID_FILE = manifest.packages.find((p) => p.expect === 'accept' && p.rail === 'accepted')!.file;

export const stages = ticketTriage;
export const card = (name: string): StageCard => {
  const c = stages.get(name);
  if (!c) throw new Error(`no reference stage ${name}`);
  return c;
};

/** A committed fixture, validated as the rail validates it; throws if it is not a valid package. */
export function fixturePackage(file: string = VALID_FILE): HandoffV1 {
  const v = validateHandoff(rawFixture(file), { accept: [HANDOFF_V1] });
  if (!v.ok) throw new Error(`${file} is not a valid package: ${JSON.stringify(v.errors)}`);
  return structuredClone(v.value);
}

const hex = (c: string) => c.repeat(64);
/** A content-addressed artifact ref as the store writes it. */
export function ref(type: string, fill: string): Artifact {
  return { type, uri: `handrail://artifacts/${hex(fill)}`, hash: `sha256:${hex(fill)}`, schema: type };
}

/** The hop block after delivering to each stage in turn from the client (as the rail builds it). */
export function relayHop(path: readonly string[]): Hop | undefined {
  let hop: Hop | undefined;
  for (const to of path) hop = nextHop(hop, to, `to ${to}`);
  return hop;
}

/**
 * The valid fixture as the rail holds it after the stages in `path` ran: artifacts replaced by
 * `artifacts`, hop re-built by `nextHop` (the fixture's hop block is free-form), ack dropped.
 */
export function packageAt(path: readonly string[], artifacts: Artifact[], patch: Partial<HandoffV1> = {}): HandoffV1 {
  const base = fixturePackage();
  delete base.ack;
  delete base.hop;
  const hop = relayHop(path);
  return { ...base, artifacts, ...(hop ? { hop } : {}), ...patch };
}

export const TICKET = ref('ticket.raw', '1');
export const INTAKE = ref('intake.v1', 'a');
export const CHUNKS = ref('chunks.v1', 'b');
export const SUMMARY = ref('summary_md', 'c');
export const VERDICT = ref('verdict.v1', 'd');
export const SUMMARY_2 = ref('summary_md', 'e');
export const RECEIPT = ref('receipt.v1', 'f');

/** Packages where the planned relay leaves them (each ready for the next stage). */
export const at = {
  start: () => packageAt([], [TICKET], { evaluator: { last_verdict: 'none', failures: [] } }),
  afterIntake: () => packageAt(['intake'], [TICKET, INTAKE]),
  afterRetrieve: () => packageAt(['intake', 'retrieve'], [TICKET, INTAKE, CHUNKS]),
  afterDraft: () => packageAt(['intake', 'retrieve', 'draft'], [TICKET, INTAKE, CHUNKS, SUMMARY]),
  afterJudge: (verdict: 'pass' | 'fail', failures: string[] = verdict === 'fail' ? ['citation_missing'] : []) =>
    packageAt(['intake', 'retrieve', 'draft', 'judge'], [TICKET, INTAKE, CHUNKS, SUMMARY, VERDICT], {
      evaluator: { last_verdict: verdict, failures },
    }),
};

/** The facts the rail gathers before acking `pkg` to `stage` (workflows/rail/hop-decisions.ts admitHop). */
export function factsFor(pkg: unknown, stage: string, over: Partial<AckFacts> & { from?: string } = {}): AckFacts {
  const c = stages.get(stage);
  const validation = validateHandoff(pkg, { accept: c?.packageVersions ?? [HANDOFF_V1] });
  const arrived = validation.ok ? validation.value : undefined;
  const { from, ...rest } = over;
  const facts = {
    stage,
    card: c,
    validation,
    hop: nextHop(arrived?.hop, stage, `to ${stage}`, from),
    maxHops: DEFAULT_MAX_HOPS,
    revisits: ticketTriage.revisits,
    alreadyDelivered: false,
    ...rest,
  };
  return { role: facts.card && arrived ? roleMismatch(facts.card, arrived) : null, ...facts };
}

/** The package a stage receives: the arrived package with the rail's hop and accepted ack on it. */
export function delivered(pkg: HandoffV1, stage: string): HandoffV1 {
  const facts = factsFor(pkg, stage);
  const decision = decideAck(facts);
  if (decision.ack !== 'accepted')
    throw new Error(`fixture not deliverable to ${stage}: ${decision.ack} ${decision.reason}`);
  const ack = ackRecord(decision, {
    stage,
    hop: facts.hop,
    deliveryKey: deliveryKey(pkg, stage),
    traceparent: pkg.trace.traceparent,
    now: new Date('2026-01-01T00:00:00Z'),
  });
  return { ...pkg, hop: facts.hop, ack };
}

/** What a well-behaved stage emits: the delivered package plus its one output artifact. */
export function emit(before: HandoffV1, artifact: Artifact, patch: Partial<HandoffV1> = {}): HandoffV1 {
  return { ...structuredClone(before), artifacts: [...before.artifacts, artifact], ...patch };
}
