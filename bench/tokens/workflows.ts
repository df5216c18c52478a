// The tokens bench's workflow module: the rail over research-brief and its whole-conversation variant.
import { researchBrief } from '../../contracts/pipelines/research-brief';
import { createRail } from '../../workflows/create-rail';
import { researchBriefWholeConversation } from './pipeline';

export const { handoffJob, stageHop } = createRail([researchBrief, researchBriefWholeConversation]);
