/**
 * ticket-hub's own stage work (contracts/pipelines/ticket-hub.ts has its cards). Its intake, judge
 * and writeback are ticket-triage's cards, so ticket-triage's activities serve them (one activity
 * per name on a worker): `builtInActivities` tells those about ticket-hub.
 */
import { policyStage, ticketHub } from '../../contracts/pipelines/ticket-hub';
import { turnOptions, type ActivityDeps, stageActivities } from '../../src';
import { helpCenterLoaded } from '../ticket-triage/help-center';
import { runRetrieve } from '../ticket-triage/retrieve';
import { runAccount } from './account';
import { runBrief } from './brief';

export function ticketHubActivities(deps: ActivityDeps) {
  const { store, model } = deps;
  return stageActivities(
    ticketHub,
    store,
    {
      policy: async (pkg, turn) => {
        await helpCenterLoaded(store);
        return runRetrieve(store, pkg, turn, policyStage);
      },
      account: (pkg, turn) => runAccount(store, model, pkg, turn),
      brief: (pkg, turn) => runBrief(store, model, pkg, turn),
    },
    turnOptions(deps),
  );
}
