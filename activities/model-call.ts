/** Calling the configured chat model from a stage: model errors become Temporal-shaped failures. */
import { asyncLocalStorage } from '@temporalio/activity';
import type { ChatMessage, ChatModel, ChatReply } from '../src/worker/model';
import { ModelError } from '../src/worker/model';
import { stageFailure } from './failures';

/** When nobody wants the answer any more (the job was cancelled, or its workflow is gone;
 * heartbeats bring the news), the model request is aborted rather than left running and paid
 * for. A worker shutting down is not such a case: it drains, so the call finishes and reports. */
export async function askModel(
  model: ChatModel,
  messages: ChatMessage[],
  options?: { maxTokens?: number; json?: boolean },
): Promise<ChatReply> {
  const signal = abandonedSignal();
  try {
    return await model.complete(messages, { ...options, ...(signal ? { signal } : {}) });
  } catch (error) {
    // Retryable model errors stay plain errors so Temporal's retry policy handles them.
    if (error instanceof ModelError && !error.retryable)
      throw stageFailure('ModelRejected', error.message, { status: error.status });
    throw error;
  }
}

/** Aborts when the activity is cancelled for any reason but the worker's own shutdown. */
export function abandonedSignal(): AbortSignal | undefined {
  const context = asyncLocalStorage.getStore();
  if (!context) return undefined;
  const abandoned = new AbortController();
  const cancelled = context.cancellationSignal;
  const onCancel = () => {
    if (!context.cancellationDetails?.workerShutdown) abandoned.abort(cancelled.reason);
  };
  if (cancelled.aborted) onCancel();
  else cancelled.addEventListener('abort', onCancel, { once: true });
  return abandoned.signal;
}
