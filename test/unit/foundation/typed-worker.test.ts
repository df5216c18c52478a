/**
 * The worker is created from pipelines plus an activity map whose type follows from their cards:
 * a missing or misnamed stage activity is a compile error (the `@ts-expect-error` lines fail the
 * type check if it ever is not), and at start-up an error that lists every missing one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtInActivities, type ActivityDeps } from '../../../activities/built-in';
import { stageActivities } from '../../../activities/stage';
import { defineStage, definePipeline } from '../../../contracts';
import { supportRouting, ticketTriage } from '../../../contracts/pipelines';
import { openStore } from '../../../src/worker/store';
import { builtInPlugin } from '../../../src/pipelines';
import { HandrailPlugin, type ActivitiesFor } from '../../../src/plugin';
import { WorkerSetupError, createHandrailWorkers } from '../../../src/worker/worker';
import { ticketEntry } from '../../../contracts/pipelines/ticket-entry';

const noConnection = undefined as never;

// Compile-time checks only (never called).
export function compileChecks(deps: ActivityDeps): void {
  const { writeback: _dropped, ...withoutWriteback } = builtInActivities(deps);
  // @ts-expect-error ticket-triage's `writeback` has no activity
  const missing: ActivitiesFor<[typeof ticketTriage]> = withoutWriteback;
  // @ts-expect-error `wrtieback` is not a stage of ticket-triage
  stageActivities(ticketTriage, deps.store, { wrtieback: () => Promise.reject(new Error('never')) });
  const complete: ActivitiesFor<[typeof ticketTriage, typeof supportRouting]> = builtInActivities(deps);
  void missing;
  void complete;
}

describe('typed worker', () => {
  it('refuses to start when a stage has no activity, listing every missing one', async () => {
    const store = await openStore({ sqlitePath: ':memory:' });
    try {
      const extra = defineStage({
        name: 'translate',
        accepts: ['receipt.v1'],
        outputs: ['translation.v1'],
        criteria: ['same meaning'],
        nominalCostUsd: 0,
      });
      const withTranslate = definePipeline({
        name: 'with-translate',
        entry: ticketEntry,
        stages: [...ticketTriage.cards, extra],
        routes: [
          ...ticketTriage.routes.filter((r) => r.after !== 'receipt.v1'),
          { after: 'receipt.v1', to: 'translate', reason: 'translate the note' },
          { after: 'translation.v1', complete: 'translated' },
        ],
        revisits: ticketTriage.revisits,
      });
      const { draft: _d, judge: _j, ...partial } = builtInActivities({ store });
      const start = createHandrailWorkers({
        connection: noConnection,
        plugin: new HandrailPlugin({
          pipelines: [withTranslate],
          activities: () => partial as never,
          workflowsPath: 'unused',
        }),
        config: { namespace: 'default', taskQueue: 'unused' },
        store,
      });
      await expect(start).rejects.toThrow(WorkerSetupError);
      await expect(start).rejects.toThrow(
        /stage "draft" has no activity[\s\S]*stage "judge" has no activity[\s\S]*stage "translate" has no activity/,
      );
    } finally {
      await store.close();
    }
  });

  it('refuses two pipelines that define one stage name differently (one worker registers one activity per name)', async () => {
    const store = await openStore({ sqlitePath: ':memory:' });
    try {
      const otherDraft = defineStage({ ...ticketTriage.get('draft')!, nominalCostUsd: 0.5 });
      const rival = definePipeline({
        name: 'rival',
        entry: ticketEntry,
        stages: ticketTriage.cards.map((c) => (c.name === 'draft' ? otherDraft : c)),
        routes: ticketTriage.routes,
        revisits: ticketTriage.revisits,
      });
      const start = createHandrailWorkers({
        connection: noConnection,
        plugin: new HandrailPlugin({
          pipelines: [ticketTriage, rival],
          activities: builtInActivities,
          workflowsPath: 'unused',
        }),
        config: { namespace: 'default', taskQueue: 'unused' },
        store,
      });
      await expect(start).rejects.toThrow(
        /stage "draft" is defined differently by pipelines "ticket-triage" and "rival"/,
      );
    } finally {
      await store.close();
    }
  });

  it('refuses to start on a handover workspace that does not exist, and creates nothing', async () => {
    const store = await openStore({ sqlitePath: ':memory:' });
    const missing = path.join(os.tmpdir(), `handrail-no-workspace-${process.pid}`, 'deeper');
    try {
      const start = createHandrailWorkers({
        connection: noConnection,
        plugin: builtInPlugin(),
        config: { namespace: 'default', taskQueue: 'unused' },
        store,
        workspace: missing,
      });
      await expect(start).rejects.toThrow(WorkerSetupError);
      await expect(start).rejects.toThrow(`handover workspace: the workspace root ${missing} does not exist`);
      expect(fs.existsSync(missing)).toBe(false);
    } finally {
      await store.close();
    }
  });
});
