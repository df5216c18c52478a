/** The support-routing pipeline's stage work (contracts/pipelines/support-routing.ts has its cards).
 * Every stage is rule-based and offline, so the factory takes no model. */
import {
  billingStage,
  escalationStage,
  generalStage,
  multilingualStage,
  seniorStage,
  supportRouting,
} from '../../contracts/pipelines/support-routing';
import { writesOf, turnOptions, type ActivityDeps, stageActivities } from '../../src';
import { runClassify } from './classify';
import { runCrmNote } from './crm-note';
import { runReview } from './review';
import { runSpecialist } from './specialists';

export function supportRoutingActivities(deps: ActivityDeps) {
  const { store } = deps;
  return stageActivities(
    supportRouting,
    store,
    {
      classify: (pkg, turn) => runClassify(store, pkg, turn),
      billing: (pkg, turn) => runSpecialist(store, billingStage, pkg, turn),
      escalation: (pkg, turn) => runSpecialist(store, escalationStage, pkg, turn),
      senior: (pkg, turn) => runSpecialist(store, seniorStage, pkg, turn),
      multilingual: (pkg, turn) => runSpecialist(store, multilingualStage, pkg, turn),
      general: (pkg, turn) => runSpecialist(store, generalStage, pkg, turn),
      review: (pkg) => runReview(store, pkg),
      'crm-note': (pkg) => runCrmNote(store, writesOf(deps), pkg),
    },
    turnOptions(deps),
  );
}
