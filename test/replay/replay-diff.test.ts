/**
 * `handrail replay --diff`: recorded jobs run again through the current pipelines. The unchanged
 * code reproduces the recorded fixtures; a changed drafter and a changed route are named at their
 * hop; and the CLI on an exported (Web UI) history.
 */
import { BUILT_IN_DIFF } from '../../src/pipelines';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { patched } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { runHandrail } from '../helpers/cli';
import { historyFile } from '../../scripts/replay/histories';
import { definePipeline } from '../../contracts';
import { ticketTriage } from '../../contracts/pipelines';
import {
  diffHistoryFiles,
  diffRecordedJob,
  historyFileSource,
  loadDiffPipelines,
  recordedJob,
  type JobDiff,
} from '../../src/replay';
import { ticketEntry } from '../../contracts/pipelines/ticket-entry';

const variant = (name: string) => path.join(__dirname, 'variants', `${name}.ts`);
const fixtures = [
  'happy-path',
  'revise-then-pass',
  'human-top-up',
  'human-approve',
  'hub-branch-top-up',
  'revisions-exhausted',
  'hop-cap',
  'rejected-schema-at-intake',
  'support-routing-handover',
].map(historyFile);
const differing = (diffs: JobDiff[]) => diffs.filter((d) => d.first);

describe('diffHistoryFiles', () => {
  it('the unchanged code makes every recorded hop as recorded', async () => {
    const diffs = await diffHistoryFiles(fixtures, { pipelines: BUILT_IN_DIFF });
    expect(differing(diffs)).toEqual([]);
    expect(diffs.find((d) => d.workflowId === 'rec-happy-path')).toMatchObject({ pipeline: 'ticket-triage', hops: 5 });
  }, 60_000);

  it("a changed drafter's wording: the first draft's hop and artifact are named", async () => {
    const [diff] = await diffHistoryFiles([historyFile('happy-path')], {
      pipelines: await loadDiffPipelines(variant('diff-drafter-wording')),
    });
    expect(diff!.first).toEqual({
      hop: 2,
      stage: 'draft',
      differences: [
        {
          what: 'artifact',
          recorded: expect.stringMatching(/^summary_md handrail:\/\/artifacts\//),
          now: expect.stringMatching(/^summary_md handrail:\/\/artifacts\//),
        },
      ],
    });
  }, 60_000);

  it('the same drafter taken as recorded (a stage that calls a model): nothing compared for it, and the report says so', async () => {
    const pipelines = { ...(await loadDiffPipelines(variant('diff-drafter-wording'))), asRecorded: ['draft'] };
    const [diff] = await diffHistoryFiles([historyFile('revise-then-pass')], { pipelines });
    expect(diff).toMatchObject({ hops: 7, notes: ['not run again, their recorded outputs stand: draft'] });
    expect(diff!.first).toBeUndefined();
  }, 60_000);

  it('a changed route: the hop whose stage the pipeline no longer routes to is named, with where it goes now', async () => {
    const diffs = await diffHistoryFiles([historyFile('happy-path'), historyFile('revise-then-pass')], {
      pipelines: await loadDiffPipelines(variant('diff-skip-judge')),
    });
    expect(diffs.map((d) => d.first)).toEqual([
      {
        hop: 3,
        stage: 'judge',
        differences: [{ what: 'route', recorded: 'judge', now: 'complete (published without a judge)' }],
      },
      {
        hop: 3,
        stage: 'judge',
        differences: [{ what: 'route', recorded: 'judge', now: 'complete (published without a judge)' }],
      },
    ]);
  }, 60_000);

  it('a card that now costs more than the wallet holds: the hop is named with the ack it gets now', async () => {
    const dearDraft = definePipeline({
      name: ticketTriage.name,
      entry: ticketEntry,
      stages: ticketTriage.cards.map((c) => (c.name === 'draft' ? { ...c, nominalCostUsd: 5 } : c)),
      routes: ticketTriage.routes,
      revisits: ticketTriage.revisits,
      ...(ticketTriage.reviser ? { reviser: ticketTriage.reviser } : {}),
    });
    const { name, workflowId, history } = historyFileSource(historyFile('happy-path'));
    const diff = await diffRecordedJob(name, recordedJob(workflowId, history)!, [dearDraft], undefined);
    expect(diff.first).toEqual({
      hop: 2,
      stage: 'draft',
      differences: [{ what: 'ack', recorded: 'accepted', now: 'rejected_budget' }],
    });
    // No stage runner: nothing was run, and the report says so.
    expect(diff.notes).toEqual(['not run again, their recorded outputs stand: intake, retrieve, draft']);
  });

  it('a route that asks patched() (only a workflow can answer): compared up to it, with a note, not a crash', async () => {
    // As docs/cluster.md rolls out a new stage: the route predicate asks the patch.
    const gated = definePipeline({
      name: ticketTriage.name,
      entry: ticketEntry,
      stages: [...ticketTriage.cards],
      routes: [
        {
          after: 'chunks.v1',
          when: (f) => f.package.hop?.to === 'retrieve' && patched('rerank-chunks'),
          to: 'draft',
          reason: 'rerank the chunks',
        },
        ...ticketTriage.routes,
      ],
      revisits: ticketTriage.revisits,
      ...(ticketTriage.reviser ? { reviser: ticketTriage.reviser } : {}),
    });
    const { name, workflowId, history } = historyFileSource(historyFile('happy-path'));
    const diff = await diffRecordedJob(name, recordedJob(workflowId, history)!, [gated], undefined);
    expect(diff.first).toBeUndefined();
    expect(diff.hops).toBe(2);
    expect(diff.notes).toEqual([
      'not run again, their recorded outputs stand: intake, retrieve',
      expect.stringMatching(
        /^2 hop\(s\) compared, then a route asks a workflow API here \(.*\), which only a workflow can answer: nothing compared after it/,
      ),
    ]);
  });

  it('a stageHop history is reported with nothing compared', async () => {
    const [diff] = await diffHistoryFiles([historyFile('duplicate-delivery')], { pipelines: BUILT_IN_DIFF });
    expect(diff).toMatchObject({ hops: 0, notes: ['not a handoffJob history: nothing to diff'] });
    expect(diff!.pipeline).toBeUndefined();
  });
});

describe('handrail replay --diff (the CLI)', () => {
  it("a Web UI download diffs like the recorder's file; a changed drafter exits 1 with --json", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-diff-'));
    const recorded = JSON.parse(fs.readFileSync(historyFile('happy-path'), 'utf8')) as {
      events: { eventType: string }[];
    };
    const pascal = (constant: string) =>
      constant
        .replace(/^EVENT_TYPE_/, '')
        .toLowerCase()
        .replace(/(?:^|_)([a-z])/g, (_m, c: string) => c.toUpperCase());
    const webUi = path.join(dir, 'web-ui-download.json');
    fs.writeFileSync(
      webUi,
      JSON.stringify({ events: recorded.events.map((e) => ({ ...e, eventType: pascal(e.eventType) })) }),
    );

    const same = await runHandrail(['replay', '--diff', webUi], {});
    expect(same.stdout).toContain(`same  ${webUi} (rec-happy-path): 5 hops as recorded`);
    expect(same.code).toBe(0);

    const changed = await runHandrail(
      ['replay', '--diff', webUi, '--pipelines', variant('diff-drafter-wording'), '--json'],
      {},
    );
    expect(changed.code).toBe(1);
    const report = JSON.parse(changed.stdout) as { differ: number; jobs: JobDiff[] };
    expect(report.differ).toBe(1);
    expect(report.jobs[0]!.first).toMatchObject({ hop: 2, stage: 'draft', differences: [{ what: 'artifact' }] });
  }, 90_000);

  it('--pipelines without --diff, and --diff with --workflows, are usage errors', async () => {
    expect((await runHandrail(['replay', historyFile('happy-path'), '--pipelines', 'x.ts'], {})).code).toBe(2);
    expect((await runHandrail(['replay', '--diff', historyFile('happy-path'), '--workflows', 'x.ts'], {})).code).toBe(
      2,
    );
  }, 60_000);
});
