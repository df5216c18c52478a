/** The reference pipeline's stage work (contracts/pipelines/ticket-triage.ts has its cards). */
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';
import type { ActivityDeps } from '../deps';
import { stageActivities } from '../stage';
import { runDraft } from './draft';
import { runIntake } from './intake';
import { runJudge } from './judge';
import { runRetrieve } from './retrieve';
import { runWriteback } from './writeback';

export function ticketTriageActivities({ store, model }: ActivityDeps) {
  return stageActivities(ticketTriage, store, {
    intake: (pkg) => runIntake(store, pkg),
    retrieve: (pkg) => runRetrieve(store, pkg),
    draft: (pkg) => runDraft(store, model, pkg),
    judge: (pkg) => runJudge(store, model, pkg),
    writeback: (pkg) => runWriteback(store, pkg),
  });
}
