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
import { turnOptions, type ActivityDeps } from '../deps';
import { stageActivities } from '../stage';
import { runClassify } from './classify';
import { runCrmNote } from './crm-note';
import { runReview } from './review';
import { runSpecialist } from './specialists';

export function supportRoutingActivities(deps: ActivityDeps) {
  const { store } = deps;
  return stageActivities(supportRouting, store, {
    classify: (pkg) => runClassify(store, pkg),
    billing: (pkg) => runSpecialist(store, billingStage, pkg),
    escalation: (pkg) => runSpecialist(store, escalationStage, pkg),
    senior: (pkg) => runSpecialist(store, seniorStage, pkg),
    multilingual: (pkg) => runSpecialist(store, multilingualStage, pkg),
    general: (pkg) => runSpecialist(store, generalStage, pkg),
    review: (pkg) => runReview(store, pkg),
    'crm-note': (pkg) => runCrmNote(store, pkg),
  }, turnOptions(deps));
}
