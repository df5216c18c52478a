/** Business failures: non-retryable, typed so the rail (and a human) can tell why a stage refused. */
import { ApplicationFailure } from '@temporalio/common';
import type { StageFailureType } from '../contracts/stages';

export function stageFailure(type: StageFailureType, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, type, ...(details === undefined ? [] : [details]));
}
