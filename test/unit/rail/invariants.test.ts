import { describe, expect, it } from 'vitest';
import {
  SUMMARY_SEPARATOR,
  joinSummary,
  referenceSegment,
  storedEntry,
  type Artifact,
  type HandoffV1,
} from '../../../contracts';
import { checkEmitted, outputText, type EmittedOutput } from '../../../workflows/rail/invariants';
import {
  CHUNKS,
  INTAKE,
  RECEIPT,
  SUMMARY,
  SUMMARY_2,
  VERDICT,
  artifactBody,
  at,
  card,
  delivered,
  emit,
  fixturePackage,
} from './helpers';

const names = (o: EmittedOutput) => checkEmitted(o).map((v) => v.invariant);
const draftBody = artifactBody('summary_md') as { markdown: string; cited_keys: string[] };
const withMarkdown = (markdown: string) => ({ ...draftBody, markdown });

/** One clean emission per reference stage, as the offline stages produce them. */
const clean = {
  intake: (): EmittedOutput => {
    const before = delivered(at.start(), 'intake');
    return {
      delivered: before,
      emitted: emit(before, INTAKE),
      artifact: INTAKE,
      body: artifactBody('intake.v1'),
      costUsd: 0.001,
      card: card('intake'),
    };
  },
  retrieve: (): EmittedOutput => {
    const before = delivered(at.afterIntake(), 'retrieve');
    const emitted = emit(before, CHUNKS, {
      tools_tried: [...before.tools_tried, { name: 'helpcenter.search', ok: true }],
    });
    return {
      delivered: before,
      emitted,
      artifact: CHUNKS,
      body: artifactBody('chunks.v1'),
      costUsd: 0.001,
      card: card('retrieve'),
    };
  },
  draft: (): EmittedOutput => {
    const before = delivered(at.afterRetrieve(), 'draft');
    return {
      delivered: before,
      emitted: emit(before, SUMMARY),
      artifact: SUMMARY,
      body: draftBody,
      costUsd: 0.001,
      card: card('draft'),
    };
  },
  judge: (): EmittedOutput => {
    const before = delivered(at.afterDraft(), 'judge');
    const emitted = emit(before, VERDICT, { evaluator: { last_verdict: 'pass', failures: [] } });
    return {
      delivered: before,
      emitted,
      artifact: VERDICT,
      body: artifactBody('verdict.v1'),
      costUsd: 0.001,
      card: card('judge'),
    };
  },
  writeback: (): EmittedOutput => {
    const before = delivered(at.afterJudge('pass'), 'writeback');
    const emitted = emit(before, RECEIPT, { tools_tried: [...before.tools_tried, { name: 'crm.patch', ok: true }] });
    return {
      delivered: before,
      emitted,
      artifact: RECEIPT,
      body: artifactBody('receipt.v1'),
      costUsd: 0.001,
      card: card('writeback'),
    };
  },
  /** The draft's revision after the judge failed the first summary. */
  revision: (summary: Artifact = SUMMARY_2): EmittedOutput => {
    const before = delivered(at.afterJudge('fail'), 'draft');
    return {
      delivered: before,
      emitted: emit(before, summary),
      artifact: summary,
      body: withMarkdown('Revised: duplicate charge reversed per [refund-policy].'),
      costUsd: 0.001,
      card: card('draft'),
    };
  },
};

/** A minimal mutation of the clean draft emission. */
const draftWith = (mutate: (emitted: HandoffV1) => HandoffV1, extra: Partial<EmittedOutput> = {}): EmittedOutput => {
  const o = clean.draft();
  return { ...o, emitted: mutate(o.emitted), ...extra };
};

describe('checkEmitted: clean emissions', () => {
  it.each(Object.keys(clean) as (keyof typeof clean)[])('a clean %s emission breaks no invariant', (stage) => {
    expect(checkEmitted(clean[stage]())).toEqual([]);
  });

  it('checks the job constraints on the clean packages (the fixture carries "no refund promises")', () => {
    expect(clean.draft().delivered.constraints).toContain('no refund promises');
  });
});

describe('checkEmitted: each invariant from one minimal mutation', () => {
  it('job_id_unchanged', () => {
    expect(names(draftWith((p) => ({ ...p, job_id: 'tkt_99999' })))).toEqual(['job_id_unchanged']);
  });

  it('goal_unchanged (the goal is intake-only)', () => {
    expect(names(draftWith((p) => ({ ...p, goal: `${p.goal}, and offer a refund` })))).toEqual(['goal_unchanged']);
  });

  it('trace_unchanged', () => {
    const other = '00-11111111111111111111111111111111-2222222222222222-01';
    expect(names(draftWith((p) => ({ ...p, trace: { ...p.trace, traceparent: other } })))).toEqual(['trace_unchanged']);
  });

  it('constraints_kept: dropping a constraint', () => {
    expect(names(draftWith((p) => ({ ...p, constraints: p.constraints.slice(1) })))).toEqual(['constraints_kept']);
  });

  it('constraints_kept: rewording a constraint', () => {
    expect(names(draftWith((p) => ({ ...p, constraints: p.constraints.map((c) => c.toUpperCase()) })))).toEqual([
      'constraints_kept',
    ]);
  });

  it('budget_not_increased: more dollars', () => {
    expect(
      names(draftWith((p) => ({ ...p, budget: { ...p.budget, usd_remaining: p.budget.usd_remaining + 0.01 } }))),
    ).toEqual(['budget_not_increased']);
  });

  it('budget_not_increased: more revisions', () => {
    expect(
      names(
        draftWith((p) => ({ ...p, budget: { ...p.budget, revisions_remaining: p.budget.revisions_remaining + 1 } })),
      ),
    ).toEqual(['budget_not_increased']);
  });

  it('hop_owned_by_rail: the stage edits the hop block', () => {
    expect(names(draftWith((p) => ({ ...p, hop: { ...p.hop!, count: 0 } })))).toEqual(['hop_owned_by_rail']);
  });

  it('hop_owned_by_rail: the stage changes the typed handoff reason', () => {
    const typed =
      (reason: 'specialization' | 'escalation') =>
      (p: HandoffV1): HandoffV1 => ({ ...p, hop: { ...p.hop!, handoff_reason: reason } });
    const o = draftWith(typed('escalation'));
    expect(names({ ...o, delivered: typed('specialization')(o.delivered) })).toEqual(['hop_owned_by_rail']);
  });

  it('a hop block echoed without its typed reason is an echo (results recorded before typed reasons carry none)', () => {
    const o = clean.draft();
    const delivered = { ...o.delivered, hop: { ...o.delivered.hop!, handoff_reason: 'specialization' as const } };
    expect(names({ ...o, delivered })).toEqual([]);
  });

  it('hop_owned_by_rail: the stage edits its ack', () => {
    expect(names(draftWith((p) => ({ ...p, ack: { ...p.ack!, reason: 'all good' } })))).toEqual(['hop_owned_by_rail']);
  });

  it('evaluator_not_reset: the drafter silently resets a failing verdict', () => {
    const o = clean.revision();
    const reset = { ...o, emitted: { ...o.emitted, evaluator: { last_verdict: 'none' as const, failures: [] } } };
    expect(names(reset)).toEqual(['evaluator_not_reset']);
  });

  it('evaluator_not_reset: the drafter clears the failure list while keeping fail', () => {
    const o = clean.revision();
    const cleared = { ...o, emitted: { ...o.emitted, evaluator: { last_verdict: 'fail' as const, failures: [] } } };
    expect(names(cleared)).toEqual(['evaluator_not_reset']);
  });

  it('evaluator_not_reset: a non-critic writes a verdict', () => {
    expect(names(draftWith((p) => ({ ...p, evaluator: { last_verdict: 'pass', failures: [] } })))).toEqual([
      'evaluator_not_reset',
    ]);
  });

  it('evaluator_not_reset: the judge leaves no verdict', () => {
    const o = clean.judge();
    expect(names({ ...o, emitted: { ...o.emitted, evaluator: { last_verdict: 'none', failures: [] } } })).toEqual([
      'evaluator_not_reset',
    ]);
  });

  it('the judge may change the verdict (pass → fail with failures)', () => {
    const o = clean.judge();
    expect(
      names({ ...o, emitted: { ...o.emitted, evaluator: { last_verdict: 'fail', failures: ['citation_missing'] } } }),
    ).toEqual([]);
  });

  it('tools_tried_append_only: a burned tool call is removed', () => {
    expect(names(draftWith((p) => ({ ...p, tools_tried: p.tools_tried.slice(1) })))).toEqual([
      'tools_tried_append_only',
    ]);
  });

  it('tools_tried_append_only: a failed call is rewritten as ok', () => {
    expect(
      names(draftWith((p) => ({ ...p, tools_tried: p.tools_tried.map((t) => ({ name: t.name, ok: true })) }))),
    ).toEqual(['tools_tried_append_only']);
  });

  it('artifacts_append_only: an earlier artifact is rewritten', () => {
    expect(
      names(
        draftWith((p) => ({
          ...p,
          artifacts: p.artifacts.map((a) => (a.type === 'intake.v1' ? { ...a, schema: 'intake.v2' } : a)),
        })),
      ),
    ).toEqual(['artifacts_append_only']);
  });

  describe('the inline entry moved to the store (contracts/entry.ts)', () => {
    const ticketJson = JSON.stringify({
      id: 'tkt_1',
      customer_id: 'cus_1',
      subject: 'Refund?',
      body: 'Call me on +1 555 0100.',
    });
    /** The clean intake emission, delivered the entry inline, emitting `entry` in its place. */
    const intakeEmitting = (entry: (inline: Artifact, jobId: string) => Artifact): EmittedOutput => {
      const o = clean.intake();
      const inline: Artifact = {
        type: 'ticket.raw',
        uri: `data:application/json,${encodeURIComponent(ticketJson)}`,
        schema: 'ticket.raw',
      };
      const before = { ...o.delivered, artifacts: [inline] };
      return {
        ...o,
        delivered: before,
        emitted: { ...emit(before, INTAKE), artifacts: [entry(inline, before.job_id), INTAKE] },
      };
    };

    it("is the one rewrite allowed: same type and schema, the job's own address, the hash of the inline bytes", () => {
      expect(names(intakeEmitting((inline, jobId) => storedEntry(jobId, inline, ticketJson)))).toEqual([]);
    });

    it.each([
      ['under another job', (inline: Artifact) => storedEntry('another-job', inline, ticketJson)],
      [
        'with the hash of other bytes',
        (inline: Artifact, jobId: string) => storedEntry(jobId, inline, ticketJson.replace('Refund', 'Refunded')),
      ],
      [
        'as another type',
        (inline: Artifact, jobId: string) => ({ ...storedEntry(jobId, inline, ticketJson), type: 'intake.v1' }),
      ],
      [
        'without its hash',
        (inline: Artifact, jobId: string) => ({ ...storedEntry(jobId, inline, ticketJson), hash: undefined }),
      ],
      [
        'with a field added',
        (inline: Artifact, jobId: string) => ({ ...storedEntry(jobId, inline, ticketJson), note: 'x' }),
      ],
    ])('artifacts_append_only: the entry stored %s', (_, entry) => {
      expect(names(intakeEmitting(entry))).toEqual(['artifacts_append_only']);
    });

    it('artifacts_append_only: an entry already by reference cannot move again', () => {
      const o = clean.intake();
      const moved = storedEntry(o.delivered.job_id, { type: 'ticket.raw', uri: 'data:,x' }, 'x');
      const before = { ...o.delivered, artifacts: [moved] };
      const again = storedEntry(before.job_id, moved, 'y');
      expect(
        names({ ...o, delivered: before, emitted: { ...emit(before, INTAKE), artifacts: [again, INTAKE] } }),
      ).toEqual(['artifacts_append_only']);
    });
  });

  it('output_declared: the stage emits a type its card does not declare', () => {
    const o = clean.draft();
    const wrong = { ...SUMMARY_2, type: 'verdict.v1', schema: 'verdict.v1' };
    expect(names({ ...o, emitted: emit(o.delivered, wrong), artifact: wrong })).toEqual(['output_declared']);
  });

  it('output_declared: the package does not carry the reported artifact', () => {
    const o = clean.draft();
    expect(names({ ...o, emitted: emit(o.delivered, SUMMARY_2) })).toEqual(['output_declared']);
  });

  it('output_declared: two artifacts appended for one output', () => {
    expect(names(draftWith((p) => ({ ...p, artifacts: [...p.artifacts, SUMMARY_2] })))).toEqual(['output_declared']);
  });

  it('output_declared: nothing appended', () => {
    const o = clean.draft();
    expect(names({ ...o, emitted: structuredClone(o.delivered) })).toEqual(['output_declared']);
  });
});

describe('checkEmitted: no_artifact_reuse', () => {
  it('a revision identical to the rejected draft breaks no_artifact_reuse (and only that)', () => {
    const v = checkEmitted(clean.revision(SUMMARY));
    expect(v.map((x) => x.invariant)).toEqual(['no_artifact_reuse']);
    expect(v[0]!.reason).toContain(SUMMARY.uri);
  });

  it('the same content under another URI is caught by its hash', () => {
    const copy = { ...SUMMARY, uri: `s3://drafts/${'c'.repeat(64)}` };
    expect(names(clean.revision(copy))).toEqual(['no_artifact_reuse']);
  });

  it('the stale-plan fixture re-emitting its rejected summary breaks no_artifact_reuse (manifest: rejected_invariant)', () => {
    const before = fixturePackage('stale-plan.json');
    const rejected = before.artifacts.find((a) => a.type === 'summary_md')!;
    expect(before.evaluator.last_verdict).toBe('fail');
    const o: EmittedOutput = {
      delivered: before,
      emitted: emit(before, rejected),
      artifact: rejected,
      body: draftBody,
      costUsd: 0.01,
      card: card('draft'),
    };
    expect(names(o)).toContain('no_artifact_reuse');
  });

  it('a genuinely new revision passes', () => {
    expect(names(clean.revision(SUMMARY_2))).toEqual([]);
  });
});

describe('checkEmitted: constraints_enforced at every hop', () => {
  const promise = 'Good news: we will refund you the duplicate charge today.';

  it('a draft promising a refund under "no refund promises" breaks constraints_enforced', () => {
    const v = checkEmitted({ ...clean.draft(), body: withMarkdown(promise) });
    expect(v.map((x) => x.invariant)).toEqual(['constraints_enforced']);
    expect(v[0]!.reason).toMatch(/^no_refund_promises: promises a refund/);
  });

  it('a middle stage (retrieve) quoting refund text from the help center is not held to the prose policy', () => {
    const o = clean.retrieve();
    const chunks = artifactBody('chunks.v1') as { chunks: { text: string }[] };
    const body = {
      ...chunks,
      chunks: [{ ...chunks.chunks[0]!, text: `Your refund has been approved and is on its way.` }],
    };
    expect(names({ ...o, body })).toEqual([]);
  });

  it('a middle stage (retrieve) that used a customer-facing tool under "do not send to customer" breaks constraints_enforced', () => {
    const o = clean.retrieve();
    const withRule = (p: HandoffV1) => ({ ...p, constraints: [...p.constraints, 'do not send to customer'] });
    const emitted = {
      ...withRule(o.emitted),
      tools_tried: [...o.emitted.tools_tried, { name: 'email.send', ok: true }],
    };
    const v = checkEmitted({ ...o, delivered: withRule(o.delivered), emitted });
    expect(v.map((x) => x.invariant)).toEqual(['constraints_enforced']);
    expect(v[0]!.reason).toMatch(/^no_outward_send: used outward-facing tool email.send/);
  });

  it('the same middle-stage output is fine when the job has no such constraint', () => {
    const o = clean.retrieve();
    const strip = (p: HandoffV1) => ({ ...p, constraints: p.constraints.filter((c) => !/refund/.test(c)) });
    const body = { chunks: [{ key: 'k', text: 'Your refund has been approved.' }] };
    expect(names({ ...o, delivered: strip(o.delivered), emitted: strip(o.emitted), body })).toEqual([]);
  });

  it('the judge quoting the refund promise it fails is not a breach', () => {
    const o = clean.judge();
    const body = { verdict: 'fail', scores: { policy: 0 }, failures: [`refund promise: "${promise}"`] };
    const emitted = { ...o.emitted, evaluator: { last_verdict: 'fail' as const, failures: ['refund_promise'] } };
    expect(names({ ...o, emitted, body })).toEqual([]);
  });

  it('a producing stage that reports no body cannot be checked and fails closed', () => {
    expect(names({ ...clean.draft(), body: undefined })).toEqual(['constraints_enforced']);
  });

  it('a producing stage with no body is fine when no constraint is enforceable', () => {
    const o = clean.draft();
    const strip = (p: HandoffV1) => ({ ...p, constraints: ['cite help center or no_match'] });
    expect(names({ ...o, delivered: strip(o.delivered), emitted: strip(o.emitted), body: undefined })).toEqual([]);
  });

  it('a customer-facing tool under an "internal only" constraint breaks it, even for the judge', () => {
    const o = clean.judge();
    const add = (p: HandoffV1) => ({ ...p, constraints: [...p.constraints, 'internal only'] });
    const emitted = add({ ...o.emitted, tools_tried: [...o.emitted.tools_tried, { name: 'email.send', ok: true }] });
    const v = checkEmitted({ ...o, delivered: add(o.delivered), emitted });
    expect(v.map((x) => x.invariant)).toEqual(['constraints_enforced']);
    expect(v[0]!.reason).toContain('email.send');
  });

  it('only the tools this stage added count: an earlier customer-facing call is not charged to it again', () => {
    const o = clean.draft();
    const add = (p: HandoffV1) => ({
      ...p,
      constraints: [...p.constraints, 'internal only'],
      tools_tried: [...p.tools_tried, { name: 'email.send', ok: false }],
    });
    expect(names({ ...o, delivered: add(o.delivered), emitted: add(o.emitted) })).toEqual([]);
  });

  describe('under "redact personal data"', () => {
    const redacting = (o: EmittedOutput): EmittedOutput => {
      const add = (p: HandoffV1) => ({ ...p, constraints: [...p.constraints, 'redact personal data'] });
      return { ...o, delivered: add(o.delivered), emitted: add(o.emitted) };
    };
    const leaky = `${draftBody.markdown}\n\nCustomer: reach jane.doe@example.com or +1 415 555 0132.`;

    it('a draft that leaves personal data unmasked breaks constraints_enforced, and the reason does not repeat it', () => {
      const v = checkEmitted({ ...redacting(clean.draft()), body: withMarkdown(leaky) });
      expect(v.map((x) => x.invariant)).toEqual(['constraints_enforced']);
      expect(v[0]!.reason).toBe(
        'redact_personal_data: leaves personal data unmasked: email j***@e***.com (and 1 more)',
      );
    });

    it('the same draft masked passes', () => {
      expect(
        names({
          ...redacting(clean.draft()),
          body: withMarkdown(leaky.replace('jane.doe@example.com', '[email]').replace('+1 415 555 0132', '[phone]')),
        }),
      ).toEqual([]);
    });

    it("intake's structured output quoting the customer's email is not held to it", () => {
      const o = redacting(clean.intake());
      expect(names({ ...o, body: { ...(o.body as object), question: 'Write to jane.doe@example.com' } })).toEqual([]);
    });
  });

  it('reports every invariant broken, not only the first', () => {
    const v = names(draftWith((p) => ({ ...p, job_id: 'tkt_1', goal: 'other' }), { body: withMarkdown(promise) }));
    expect(v).toEqual(['job_id_unchanged', 'goal_unchanged', 'constraints_enforced']);
  });
});

describe('outputText', () => {
  it('reads authored prose (markdown bodies, plain strings) and nothing from structured bodies', () => {
    expect(outputText(draftBody)).toBe(draftBody.markdown);
    expect(outputText('plain')).toBe('plain');
    expect(outputText({ chunks: [{ text: 'x' }] })).toBe('');
    expect(outputText(undefined)).toBe('');
  });
});

describe('checkEmitted: cost_reported and key order', () => {
  it.each([Number.NaN, -0.01, Number.POSITIVE_INFINITY])('a reported cost of %s breaks cost_reported', (cost) => {
    expect(names({ ...clean.draft(), costUsd: cost })).toEqual(['cost_reported']);
  });

  it('an evaluator re-serialised with its keys in another order is not a change', () => {
    const o = clean.draft();
    const { last_verdict, failures } = o.emitted.evaluator;
    expect(names({ ...o, emitted: { ...o.emitted, evaluator: { failures, last_verdict } } })).toEqual([]);
  });
});

describe('checkEmitted: summary_append_only (segments appended, never re-summarised)', () => {
  const SEGMENTS = [
    'hop 0 intake → intake.v1: intent refund, risk low, language en',
    'hop 1 retrieve → chunks.v1: 3 chunks: refund-policy.2, refund-policy.4, refund-policy.1',
  ];
  const OWN = 'hop 2 draft → summary_md: draft revision 0 citing refund-policy.2';
  /** The clean draft, delivered `delivered` and emitting `emitted` as its summary. */
  const draftSummary = (delivered: string | undefined, emitted: string | undefined): EmittedOutput => {
    const o = clean.draft();
    const set = (p: HandoffV1, summary: string | undefined): HandoffV1 => {
      const { summary: _old, ...rest } = p;
      return summary === undefined ? rest : { ...rest, summary };
    };
    return { ...o, delivered: set(o.delivered, delivered), emitted: set(o.emitted, emitted) };
  };
  const delivered = joinSummary(SEGMENTS);
  const REF = referenceSegment('9'.repeat(64), 1);

  it("the stage's own segment appended (or the first segment alone) breaks nothing", () => {
    expect(names(draftSummary(delivered, `${delivered}${SUMMARY_SEPARATOR}${OWN}`))).toEqual([]);
    expect(names(draftSummary(undefined, OWN))).toEqual([]);
  });

  it('one minimal mutation: the stage rewrites an earlier segment', () => {
    const rewritten = joinSummary([SEGMENTS[0]!.replace('risk low', 'risk high'), SEGMENTS[1]!, OWN]);
    expect(names(draftSummary(delivered, rewritten))).toEqual(['summary_append_only']);
  });

  it('cutting the oldest segment, re-summarising, or dropping the summary is rejected', () => {
    expect(names(draftSummary(delivered, joinSummary([SEGMENTS[1]!, OWN])))).toEqual(['summary_append_only']);
    expect(names(draftSummary(delivered, 'refund ticket, 3 chunks, draft cites refund-policy.2'))).toEqual([
      'summary_append_only',
    ]);
    expect(names(draftSummary(delivered, undefined))).toEqual(['summary_append_only']);
  });

  it('a recorded result from before segments echoes what the old rail delivered: the previous summary plus a rail line, still a prefix', () => {
    // On replay the rail delivers the previous recorded summary; the recorded result echoes the
    // old rail's (that summary + "\n<hop>. <stage>: <ack> → <type>").
    const previous = '0. intake: accepted → intake.v1\n1. retrieve: accepted → chunks.v1';
    expect(names(draftSummary(previous, `${previous}\n2. draft: accepted → summary_md`))).toEqual([]);
    expect(names(draftSummary(undefined, '0. intake: accepted → intake.v1'))).toEqual([]);
    expect(names(draftSummary(previous, previous))).toEqual([]);
  });

  it('after an offload: a reference standing for the moved segments, then the newest unchanged, then the own segment', () => {
    expect(names(draftSummary(delivered, joinSummary([REF, SEGMENTS[1]!, OWN])))).toEqual([]);
    // Everything moved (the own segment too): the reference stands for all of it.
    expect(names(draftSummary(delivered, referenceSegment('9'.repeat(64), 3)))).toEqual([]);
    // A chained offload: the delivered reference is among what moved.
    const chained = joinSummary([referenceSegment('8'.repeat(64), 5), ...SEGMENTS]);
    expect(names(draftSummary(chained, joinSummary([referenceSegment('9'.repeat(64), 6), SEGMENTS[1]!, OWN])))).toEqual(
      [],
    );
  });

  it('after an offload: a reference counting fewer segments than moved, a kept segment rewritten, or no valid reference is rejected', () => {
    const chained = joinSummary([referenceSegment('8'.repeat(64), 5), ...SEGMENTS]);
    expect(names(draftSummary(chained, joinSummary([referenceSegment('9'.repeat(64), 1), SEGMENTS[1]!, OWN])))).toEqual(
      ['summary_append_only'],
    );
    expect(names(draftSummary(delivered, joinSummary([REF, `${SEGMENTS[1]!} (abridged)`, OWN])))).toEqual([
      'summary_append_only',
    ]);
    expect(names(draftSummary(delivered, joinSummary(['[earlier hops: see the store]', SEGMENTS[1]!, OWN])))).toEqual([
      'summary_append_only',
    ]);
  });
});
