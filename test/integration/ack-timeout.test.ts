/**
 * Seed 004's ACK timeout on the real dev server: a stage whose workers do not pick the hop up in
 * time is tried once more, then its declared fallback answers. The stage cards come from a
 * test-only bundle in which `retrieve` sits on a queue nobody polls (fixtures/).
 */
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import webpack from 'webpack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StageWork } from '../../contracts';
import { PROJECT_ROOT } from '../../src/config';
import { startJob } from '../../src/client';
import { jobRequest, scheduledActivities, startRail, type Rail } from '../helpers/rail';

const SHIPPED_STAGES = /[\\/]contracts[\\/]stages(\.ts)?$/;
const FIXTURE = path.join(PROJECT_ROOT, 'test', 'integration', 'fixtures', 'stages-unreachable-retrieve.ts');

let rail: Rail;

beforeAll(async () => {
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.join(PROJECT_ROOT, 'workflows', 'index.ts'),
    logger: new DefaultLogger('WARN'),
    webpackConfigHook: (config) => ({
      ...config,
      plugins: [
        ...(config.plugins ?? []),
        // Every import of the shipped cards gets the fixture, except the fixture's own.
        new webpack.NormalModuleReplacementPlugin(SHIPPED_STAGES, (resource: { request: string; contextInfo?: { issuer?: string } }) => {
          if (resource.contextInfo?.issuer !== FIXTURE) resource.request = FIXTURE;
        }),
      ],
    }),
  });
  rail = await startRail({
    workflowBundle: bundle,
    activities: (real) => ({ 'retrieve-backup': (work: StageWork) => real.retrieve({ ...work, stage: 'retrieve' }) }),
  });
});
afterAll(async () => {
  await rail?.stop();
});

describe('ACK timeout (seed 004) on the real dev server', () => {
  it('retrieve unpicked within its ACK timeout is tried once more, then its fallback answers and the job completes', async () => {
    const request = jobRequest();
    const { handle } = await startJob(rail.client, request, rail);
    const result = await handle.result();

    expect(result.status).toBe('completed');
    const history = await handle.fetchHistory();
    const timedOut = (history.events ?? []).filter((e) => e.activityTaskTimedOutEventAttributes);
    expect(timedOut).toHaveLength(2);
    expect(await scheduledActivities(rail.client, request.job_id)).toEqual(['intake', 'retrieve', 'retrieve', 'retrieve-backup', 'draft', 'judge', 'writeback']);
    expect(result.package.hop?.chain).toContain('retrieve');
    expect(await rail.store.listWrites(request.job_id)).toHaveLength(1);
  });
});
