/** The reference pipeline's stage work (contracts/pipelines/ticket-triage.ts has its cards). */
import type { Pipeline } from '../../contracts';
import { ticketTriage } from '../../contracts/pipelines/ticket-triage';
import { writesOf, turnOptions, type ActivityDeps, stageActivities } from '../../src';
import { runDraft } from './draft';
import { helpCenterLoaded } from './help-center';
import { runIntake } from './intake';
import { runJudge } from './judge';
import { runRetrieve } from './retrieve';
import { runWriteback } from './writeback';

/** `sharedWith`: pipelines reusing these cards (ticket-hub: intake, judge, writeback), whose jobs
 * these activities serve too; writeback takes their stages' evidence. */
export function ticketTriageActivities(deps: ActivityDeps, sharedWith: readonly Pipeline[] = []) {
  const { store, model } = deps;
  return stageActivities(
    ticketTriage,
    store,
    {
      intake: (pkg, turn) => runIntake(store, pkg, turn),
      retrieve: async (pkg, turn) => {
        await helpCenterLoaded(store);
        return runRetrieve(store, pkg, turn);
      },
      draft: (pkg, turn) => runDraft(store, model, pkg, turn),
      judge: (pkg, turn) => runJudge(store, model, pkg, turn),
      writeback: (pkg, turn) => runWriteback(store, writesOf(deps), pkg, turn),
    },
    { ...turnOptions(deps), sharedWith },
  );
}
