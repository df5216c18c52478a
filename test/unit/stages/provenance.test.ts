/**
 * Provenance (issue "Provenance" 1–3): a writer acts only on evidence the rail recorded for this
 * job — every artifact recorded by a stage of the pipeline for the same job id, the newest by a
 * critic whose recorded verdict is `pass` over exactly these artifacts. On a real SQLite store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import type { Artifact, HandoffV1 } from '../../../contracts';
import { ticketTriage } from '../../../contracts/pipelines';
import { checkProvenance, refuseBreaches, scopedJob, scopedKey, type DeliveryScope } from '../../../activities/stage';
import { openStore, type Store } from '../../../src/worker/store';
import { firstPackage, ticketRef, refundTicket } from './helpers';

const ref = (type: string, fill: string): Artifact => ({
  type,
  uri: `handrail://artifacts/${fill.repeat(64)}`,
  hash: `sha256:${fill.repeat(64)}`,
});
const [INTAKE, CHUNKS, DRAFT, VERDICT, OTHER_DRAFT] = [
  ref('intake.v1', '1'),
  ref('chunks.v1', '2'),
  ref('summary_md', '3'),
  ref('verdict.v1', '4'),
  ref('summary_md', '5'),
];
let store: Store;
let base: HandoffV1;

async function recorded(
  jobId: string,
  stage: string,
  artifacts: Artifact[],
  verdict: 'pass' | 'fail' | 'none' = 'none',
  scope: DeliveryScope = 'rail',
): Promise<void> {
  const pkg = { ...base, job_id: jobId, artifacts, evaluator: { last_verdict: verdict, failures: [] } };
  const artifact = artifacts.at(-1)!;
  const key = scopedKey(scope, `${jobId}:${stage}:${artifacts.length}`);
  await store.recordStageCompletion(
    key,
    { package: pkg, artifact, cost_usd: 0 },
    { job_id: scopedJob(scope, jobId), stage, delivery_sha: 'a'.repeat(64), package_sha: 'b'.repeat(64) },
  );
}

/** job_1's honest chain: intake → retrieve → draft → judge (pass), recorded in `scope`. */
async function honestChain(
  jobId = 'job_1',
  verdict: 'pass' | 'fail' = 'pass',
  scope: DeliveryScope = 'rail',
): Promise<HandoffV1> {
  const ticket = base.artifacts[0]!;
  await recorded(jobId, 'intake', [ticket, INTAKE], 'none', scope);
  await recorded(jobId, 'retrieve', [ticket, INTAKE, CHUNKS], 'none', scope);
  await recorded(jobId, 'draft', [ticket, INTAKE, CHUNKS, DRAFT], 'none', scope);
  await recorded(jobId, 'judge', [ticket, INTAKE, CHUNKS, DRAFT, VERDICT], verdict, scope);
  return {
    ...base,
    job_id: jobId,
    artifacts: [ticket, INTAKE, CHUNKS, DRAFT, VERDICT],
    evaluator: { last_verdict: 'pass', failures: [] },
  };
}

const refusal = async (pkg: HandoffV1) => {
  const error = await checkProvenance(store, ticketTriage, pkg).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
};

beforeEach(async () => {
  store = await openStore({ sqlitePath: ':memory:' });
  base = firstPackage(ticketRef(refundTicket));
});
afterEach(async () => {
  await store.close();
});

describe('checkProvenance', () => {
  it("passes the chain this job's stages recorded, ending in its judge's pass", async () => {
    await expect(checkProvenance(store, ticketTriage, await honestChain())).resolves.toBeUndefined();
  });

  it("refuses artifacts recorded for another job (job B reusing job A's)", async () => {
    const a = await honestChain('job_a');
    const error = await refusal({ ...a, job_id: 'job_b' });
    expect(error).toMatchObject({
      type: 'ArtifactInvalid',
      message: expect.stringMatching(/intake\.v1 .* was not recorded for job job_b/),
    });
  });

  it('refuses caller-made data: artifacts', async () => {
    const pkg = await honestChain();
    const forged = {
      ...pkg,
      artifacts: [
        pkg.artifacts[0]!,
        { type: 'intake.v1', uri: 'data:application/json,%7B%7D' },
        ...pkg.artifacts.slice(2),
      ],
    };
    expect(await refusal(forged)).toMatchObject({
      type: 'ArtifactInvalid',
      message: expect.stringMatching(/intake\.v1 data:.* was not recorded for job job_1/),
    });
  });

  it('refuses when the recorded judge failed the draft, whatever the package claims', async () => {
    expect(await refusal(await honestChain('job_1', 'fail'))).toMatchObject({
      type: 'VerdictNotPassing',
      message: expect.stringMatching(/no passing verdict recorded for job job_1/),
    });
  });

  it('refuses a recorded pass over other artifacts (a later draft slipped in before the verdict)', async () => {
    const pkg = await honestChain();
    await recorded('job_1', 'draft', [pkg.artifacts[0]!, INTAKE, CHUNKS, DRAFT, VERDICT, OTHER_DRAFT]);
    const swapped = { ...pkg, artifacts: [pkg.artifacts[0]!, INTAKE, CHUNKS, OTHER_DRAFT, VERDICT] };
    expect(await refusal(swapped)).toMatchObject({ type: 'VerdictNotPassing' });
  });

  it('refuses a judged package whose constraints were changed after the judge passed it', async () => {
    const pkg = await honestChain();
    expect(await refusal({ ...pkg, constraints: [] })).toMatchObject({
      type: 'VerdictNotPassing',
      message: expect.stringMatching(/over this package/),
    });
  });

  it('finds the pass over this package among several records of the same verdict bytes', async () => {
    // The same verdict bytes recorded first over another chain of the job (a later pass that
    // judged identical text lands on the same content address).
    await recorded('job_1', 'judge', [base.artifacts[0]!, INTAKE, CHUNKS, OTHER_DRAFT, DRAFT, VERDICT], 'pass');
    const pkg = await honestChain();
    await expect(checkProvenance(store, ticketTriage, pkg)).resolves.toBeUndefined();
  });

  it("keeps direct deliveries apart: a stageHop chain is not the job's evidence, nor the job's a stageHop's", async () => {
    const railJob = await honestChain('job_1');
    await expect(checkProvenance(store, ticketTriage, railJob, 'direct')).rejects.toMatchObject({
      type: 'ArtifactInvalid',
    });
    const directJob = await honestChain('job_2', 'pass', 'direct');
    await expect(checkProvenance(store, ticketTriage, directJob, 'direct')).resolves.toBeUndefined();
    await expect(checkProvenance(store, ticketTriage, directJob, 'rail')).rejects.toMatchObject({
      type: 'ArtifactInvalid',
    });
  });

  it('refuses a newest artifact recorded by a stage that is not a critic', async () => {
    const pkg = await honestChain();
    expect(await refusal({ ...pkg, artifacts: pkg.artifacts.slice(0, -1) })).toMatchObject({
      type: 'VerdictNotPassing',
    });
  });

  it("the writer holds what it writes to the job's constraints, whatever the verdict said", () => {
    expect(() => refuseBreaches(['no refund promises'], 'We will refund you in full today.', 'writeback')).toThrow(
      /writeback refuses to write: no_refund_promises/,
    );
    expect(() =>
      refuseBreaches(['no refund promises'], 'Duplicate charge; reversal per [refund-policy].', 'writeback'),
    ).not.toThrow();
  });

  it("refuses a package that does not start with the job's entry artifact", async () => {
    const pkg = await honestChain();
    expect(await refusal({ ...pkg, artifacts: pkg.artifacts.slice(1) })).toMatchObject({
      type: 'ArtifactInvalid',
      message: expect.stringMatching(/first artifact must be the job's ticket\.raw/),
    });
  });
});
