/** definePipeline checks the whole definition at once and refuses to load, listing every problem. */
import { describe, expect, it } from 'vitest';
import {
  PipelineDefinitionError,
  checkPipeline,
  defineStage,
  definePipeline,
  findPipeline,
  type PipelineSpec,
} from '../../../contracts';
import { BUILT_IN_PIPELINES, supportRouting, ticketTriage } from '../../../contracts/pipelines';
import { judgeStage, writebackStage } from '../../../contracts/pipelines/ticket-triage';
import { ticketEntry } from '../../../contracts/pipelines/ticket-entry';

const triage: PipelineSpec = {
  name: 'triage-copy',
  entry: ticketEntry,
  stages: ticketTriage.cards,
  routes: ticketTriage.routes,
  revisits: ticketTriage.revisits,
  reviser: 'draft',
};
const problems = (change: Partial<PipelineSpec>) => checkPipeline({ ...triage, ...change });

describe('definePipeline', () => {
  it('accepts the built-in pipelines', () => {
    for (const p of BUILT_IN_PIPELINES)
      expect(checkPipeline({ ...p, entry: p.entrySpec, stages: p.cards, versions: {} })).toEqual([]);
    expect(ticketTriage.get('judge')).toBe(judgeStage);
  });

  it('refuses a route to an unknown stage', () => {
    expect(problems({ routes: [...triage.routes, { after: 'intake.v1', to: 'transalte', reason: 'x' }] })).toContain(
      'route 9 (after intake.v1) goes to "transalte", which is not a stage of this pipeline',
    );
  });

  it('refuses a route to a stage that does not accept the artifact it routes', () => {
    const routes = triage.routes.map((r) => (r.after === 'chunks.v1' ? { ...r, to: 'judge' } : r));
    expect(problems({ routes })).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/goes to "judge", which does not accept chunks\.v1 \(accepts summary_md\)/),
      ]),
    );
  });

  it('refuses a stage no route reaches', () => {
    const orphan = defineStage({
      name: 'translate',
      accepts: ['summary_md'],
      outputs: ['translation.v1'],
      criteria: ['same meaning'],
      nominalCostUsd: 0,
    });
    expect(problems({ stages: [...triage.stages, orphan] })).toContain(
      'stage "translate" is reached by no route from ticket.raw',
    );
  });

  it('lists a missing pipeline name and a missing output type (plain JS) as problems, not a crash', () => {
    const unnamedOutput = { ...writebackStage, outputs: [undefined as unknown as string] };
    const found = problems({
      name: undefined as unknown as string,
      stages: triage.stages.map((c) => (c.name === 'writeback' ? unnamedOutput : c)),
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'pipeline name undefined is not a lowercase slug',
        expect.stringMatching(/^stage "writeback" must name its output artifact type\(s\) as slugs/),
      ]),
    );
  });

  it('refuses a pipeline with no route to completion', () => {
    expect(problems({ routes: triage.routes.filter((r) => !('complete' in r)) })).toContain(
      'no route from ticket.raw leads to completion (add a rule with `complete`)',
    );
  });

  it('refuses two writers of one system and a judge holding a write tool (the stage-card rules)', () => {
    const second = defineStage({ ...writebackStage, name: 'crm-sync', accepts: ['receipt.v1'] });
    const armedJudge = defineStage({ ...judgeStage, tools: [{ name: 'crm.patch', access: 'write', system: 'crm' }] });
    const found = problems({
      stages: [...triage.stages.filter((c) => c.name !== 'judge'), armedJudge, second],
      routes: [
        ...triage.routes.filter((r) => r.after !== 'receipt.v1'),
        { after: 'receipt.v1', to: 'crm-sync', reason: 'sync' },
        { after: 'receipt.v1', complete: 'done' },
      ],
    });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/system "crm" has 2 writers \(writeback, crm-sync\)/),
        expect.stringMatching(/stage "judge" is a critic and must hold no write tools/),
      ]),
    );
  });

  it('refuses a revisit edge with no bound, or naming an unknown stage', () => {
    const found = problems({
      revisits: [
        { from: 'judge', to: 'draft' },
        { from: 'judge', to: 'redraft', bound: { max: 0 } },
      ],
    });
    expect(found).toEqual(
      expect.arrayContaining([
        "revisit edge judge → draft has no bound: say 'revisions' or { max: n }",
        'revisit edge judge → redraft names "redraft", which is not a stage of this pipeline',
        'revisit edge judge → redraft has bound max 0; it must be an integer >= 1',
      ]),
    );
  });

  it('refuses a stage reading a package version the pipeline does not declare, and edge options on an edge no route takes', () => {
    const v2Draft = defineStage({ ...ticketTriage.get('draft')!, packageVersions: ['handoff.v2'] });
    const found = problems({
      stages: triage.stages.map((c) => (c.name === 'draft' ? v2Draft : c)),
      edges: [{ from: 'intake', to: 'judge' }],
    });
    expect(found).toEqual(
      expect.arrayContaining([
        'stage "draft" reads handoff.v2, which this pipeline does not declare',
        'edge options for intake → judge: no route takes that edge',
      ]),
    );
  });

  it('refuses handover options it cannot honour: an unknown strategy, an unregistered callable, a cap without a handover, one edge twice', () => {
    const found = problems({
      edges: [
        { from: 'intake', to: 'retrieve', handover: 'transcript_summarize' as never },
        { from: 'retrieve', to: 'draft', handover: { callable: 'nowhere' } },
        { from: 'draft', to: 'judge', maxTokens: 2000 },
        { from: 'judge', to: 'writeback', handover: 'transcript_prepend', maxTokens: 0, overflow: 'truncate' as never },
        { from: 'judge', to: 'writeback', handover: 'transcript_append' },
      ],
    });
    expect(found).toEqual([
      'edge intake → retrieve: unknown handover strategy "transcript_summarize" (known: history, transcript_prepend, transcript_append, transcript_materialize, or { callable: name })',
      'edge retrieve → draft: handover callable "nowhere" is not registered in the pipeline\'s handovers',
      'edge draft → judge: maxTokens caps a handover, and this edge has none (its next stage gets only the package)',
      'edge judge → writeback: maxTokens 0 must be an integer >= 1',
      "edge judge → writeback: overflow \"truncate\" must be 'transcript_materialize' or 'refuse'",
      'edge judge → writeback has options twice; give each edge one entry',
    ]);
  });

  it('a callable handover resolves from the pipeline and warns that it cannot be serialised with it', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const last = () => [];
    const p = definePipeline({
      ...triage,
      edges: [{ from: 'draft', to: 'judge', handover: { callable: 'last' } }],
      handovers: { last },
    });
    // Node emits warnings on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    expect(p.edge('draft', 'judge')?.callable).toBe(last);
    expect(p.edge('judge', 'draft')).toBeUndefined();
    expect(warnings).toEqual([
      expect.stringMatching(
        /^HandoverWarning: pipeline "triage-copy": callable handover on draft → judge \(last\) cannot be serialised with the pipeline/,
      ),
    ]);
  });

  it("refuses a reviser that is not a worker (a human's revise must not go to the writer)", () => {
    expect(problems({ reviser: 'writeback' })).toContain(
      'reviser "writeback" is a writer; a human\'s revise sends work to a worker (the drafter)',
    );
  });

  it('lists every problem in one refusal', () => {
    const spec = {
      ...triage,
      name: 'Bad Name',
      reviser: 'redraft',
      revisits: [{ from: 'judge', to: 'draft' }],
      routes: [{ after: 'ticket.raw', to: 'nowhere', reason: 'x' }],
    };
    let error: unknown;
    try {
      definePipeline(spec);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PipelineDefinitionError);
    const message = (error as Error).message;
    expect(message).toMatch(/^pipeline "Bad Name" refused \(\d+ problems\):/);
    for (const part of [
      'not a lowercase slug',
      'goes to "nowhere"',
      'reached by no route',
      'no route from ticket.raw leads to completion',
      'has no bound',
      'reviser "redraft"',
    ]) {
      expect(message).toContain(part);
    }
  });

  it('a job names its pipeline; none named means the first', () => {
    expect(findPipeline(BUILT_IN_PIPELINES, undefined)).toBe(ticketTriage);
    expect(findPipeline(BUILT_IN_PIPELINES, 'support-routing')).toBe(supportRouting);
    expect(findPipeline(BUILT_IN_PIPELINES, 'nope')).toBeUndefined();
  });
});
