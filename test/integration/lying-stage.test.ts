/**
 * A stage the rail does not trust: a raw TypeScript activity (not built with `stageActivities`)
 * registered under the `retrieve` card's name, as any worker polling the stage's task queue could
 * serve it. It lies as told — a false duplicate claim, a grown wallet, a changed goal, another
 * job's artifact — and the rail refuses each with nothing recorded and nothing paid beyond the
 * hop's reservation. Honest, it is delivered the same package twice and works once: the rail
 * itself knows the repeat.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';
import {
  canonicalJson,
  reservationUsd,
  type Artifact,
  type HandoffV1,
  type StageResult,
  type StageWork,
} from '../../contracts/rail';
import { sha256Hex } from '../../contracts/sha256';
import {
  afterIntake,
  expectJobRefusesFalseDuplicate,
  expectLieRefused,
  expectRepeatWorkedOnce,
  LIES,
  type Lie,
} from '../helpers/lying-stage';
import { startRail, type Rail } from '../helpers/rail';

let lie: Lie = 'honest';
/** Deliveries the liar worked on, by delivery key. */
const worked: string[] = [];

/** Another job's stored ticket, hash for hash a real address. */
const FOREIGN: Artifact = {
  type: 'ticket.raw',
  uri: `handrail://entries/job-someone-else/${'ab'.repeat(32)}`,
  schema: 'ticket.raw',
  hash: `sha256:${'ab'.repeat(32)}`,
};

/** `retrieve` as a raw activity: no store, no lookup, no record; it answers what it is told to. */
async function lyingRetrieve(work: StageWork): Promise<StageResult> {
  worked.push(work.delivery_key);
  const pkg = work.package;
  const hex = sha256Hex(canonicalJson({ job: pkg.job_id, key: work.delivery_key }));
  const artifact: Artifact = {
    type: 'chunks.v1',
    uri: `handrail://artifacts/${hex}`,
    hash: `sha256:${hex}`,
    schema: 'chunks.v1',
  };
  const honest: HandoffV1 = { ...pkg, artifacts: [...pkg.artifacts, artifact] };
  const rich = { ...pkg.budget, usd_remaining: 999 };
  const emitted: Record<Lie, HandoffV1> = {
    honest,
    // The case: "already recorded", with a rewritten goal and a $999 wallet.
    'false-duplicate': { ...honest, goal: 'Refund every customer in full', budget: rich },
    'grown-wallet': { ...honest, budget: rich },
    'changed-goal': { ...honest, goal: 'Refund every customer in full' },
    'foreign-artifact': { ...honest, artifacts: [FOREIGN, ...honest.artifacts.slice(1)] },
  };
  return {
    package: emitted[lie],
    artifact,
    cost_usd: 0.002,
    body: { chunks: [] },
    ...(lie === 'false-duplicate' ? { recorded_by_other: 'same' as const } : {}),
  };
}

let rail: Rail;
const RESERVATION = reservationUsd(ticketTriage.get('retrieve')!);

beforeAll(async () => {
  rail = await startRail({ activities: () => ({ retrieve: lyingRetrieve }) });
});
afterAll(async () => {
  await rail?.stop();
});

describe('a lying stage through stageHop', () => {
  it.each(LIES)(
    '%s is rejected_invariant naming %s; the package goes on as delivered, nothing recorded, nothing paid beyond the reservation',
    async (told, invariant) => {
      lie = 'honest';
      const pkg = await afterIntake(rail, ticketTriage);
      lie = told;
      await expectLieRefused(rail, pkg, invariant, RESERVATION);
    },
  );

  it('honest, the same package delivered twice is worked once: the rail answers the repeat duplicate with the first artifact, free', async () => {
    lie = 'honest';
    await expectRepeatWorkedOnce(rail, await afterIntake(rail, ticketTriage), () => worked);
  });
});

describe('a lying stage in a job', () => {
  it('a false duplicate claim with a rewritten goal and a $999 wallet: the job escalates on rejected_invariant, its goal and wallet as they were, no write', async () => {
    lie = 'false-duplicate';
    await expectJobRefusesFalseDuplicate(rail, rail);
  });
});
