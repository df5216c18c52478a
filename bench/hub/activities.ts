// The hub bench's stage work: `start` reports the shape its ticket names, each specialist waits a
// fixed time (a model call's stand-in; runStageOnce heartbeats meanwhile) and `finish` answers at
// once. Every artifact is tiny, so the figures are the rail's and the wait's, not the store's.
import { sleep } from '@temporalio/activity';
import { z } from 'zod';
import { type Artifact, type HandoffV1 } from '../../contracts';
import { TicketRaw } from '../../contracts/pipelines/ticket-artifacts';
import { readArtifactBody, requireArtifact, writeArtifact } from '../../activities/artifacts';
import { turnOptions, type ActivityDeps } from '../../activities/deps';
import { stageFailure } from '../../activities/failures';
import { stageActivities, type StageOutput } from '../../activities/stage';
import type { Store } from '../../src/worker/store';
import { FINISH, hubBench, SHAPES, SPEC_A, SPEC_B, START, type Shape } from './pipeline';

/** How long each specialist works. */
export const SPECIALIST_MS = 300;

/** The line of the ticket body that names the shape. */
export const shapeLine = (shape: Shape) => `bench shape: ${shape}`;
const SHAPE_LINE = /bench shape: (hub|relay)/;

const StartV1 = z.object({ shape: z.enum(SHAPES) });
const SpecialistV1 = z.object({ stage: z.string(), worked_ms: z.int(), after: z.string() });
const FinishV1 = z.object({ from: z.string() });

const newest = (pkg: HandoffV1) => pkg.artifacts[pkg.artifacts.length - 1]?.type ?? 'nothing';

async function output(artifact: Promise<Artifact>, body: unknown): Promise<StageOutput> {
  return { artifact: await artifact, body, cost_usd: 0 };
}

function specialist(store: Store, stage: string, type: string) {
  return async (pkg: HandoffV1) => {
    await sleep(SPECIALIST_MS);
    const body = { stage, worked_ms: SPECIALIST_MS, after: newest(pkg) };
    return output(writeArtifact(store, type, SpecialistV1, body), body);
  };
}

export function hubActivities(deps: ActivityDeps) {
  const { store } = deps;
  return stageActivities(
    hubBench,
    store,
    {
      start: async (pkg) => {
        const ticket = await readArtifactBody(store, requireArtifact(pkg, 'start', 'ticket.raw'), TicketRaw);
        const shape = SHAPE_LINE.exec(ticket.body)?.[1] as Shape | undefined;
        if (shape === undefined)
          throw stageFailure(
            'StageInputInvalid',
            'start: the ticket body names no shape ("bench shape: hub" or "relay")',
          );
        const body = { shape };
        return output(writeArtifact(store, START, StartV1, body), body);
      },
      'spec-a': specialist(store, 'spec-a', SPEC_A),
      'spec-b': specialist(store, 'spec-b', SPEC_B),
      finish: async (pkg) => {
        const body = { from: newest(pkg) };
        return output(writeArtifact(store, FINISH, FinishV1, body), body);
      },
    },
    turnOptions(deps),
  );
}
