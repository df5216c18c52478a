// A judge that fails each job's drafts a set number of times, each time for a new reason (so the
// loop is never `no_progress`), then passes: the long jobs' stand-in for a demanding critic.
import { readArtifactBody, requireArtifact, writeArtifact } from '../../activities/artifacts';
import { stageActivities } from '../../activities/stage';
import { SummaryMd, VerdictV1 } from '../../contracts';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';
import type { Store } from '../../src/worker/store';
import { longCritique } from './pipeline';

/** `failuresLeft`: failing verdicts each job id still gets (none: it passes at once). */
export function relentingJudge(store: Store, failuresLeft: Map<string, number>) {
  return stageActivities(
    ticketTriage,
    store,
    {
      judge: async (pkg) => {
        const summary = requireArtifact(pkg, 'judge', 'summary_md');
        const left = failuresLeft.get(pkg.job_id) ?? 0;
        failuresLeft.set(pkg.job_id, left - 1);
        const { markdown } = await readArtifactBody(store, summary, SummaryMd);
        const failures = left > 0 ? [`attempt_${left}: not yet (draft of ${markdown.length} characters)`] : [];
        const verdict = left > 0 ? ('fail' as const) : ('pass' as const);
        const body = { verdict, scores: { answers_question: left > 0 ? 0 : 1 }, failures, summary_hash: summary.hash };
        return {
          artifact: await writeArtifact(store, 'verdict.v1', VerdictV1, body),
          body,
          cost_usd: 0.001,
          evaluator: { last_verdict: verdict, failures },
        };
      },
    },
    { sharedWith: [longCritique] },
  ).judge;
}
