/** Calling the configured chat model from a stage: model errors become Temporal-shaped failures. */
import { asyncLocalStorage } from '@temporalio/activity';
import type { ChatMessage, ChatModel, ChatReply } from '../src/model';
import { ModelError } from '../src/model';
import { stageFailure } from './failures';

/** When the stage's activity is cancelled (the job was cancelled; heartbeats bring the news),
 * the model request is aborted rather than left running, and paid for, after nobody wants it. */
export async function askModel(model: ChatModel, messages: ChatMessage[], options?: { maxTokens?: number; json?: boolean }): Promise<ChatReply> {
  const signal = asyncLocalStorage.getStore()?.cancellationSignal;
  try {
    return await model.complete(messages, { ...options, ...(signal ? { signal } : {}) });
  } catch (error) {
    // Retryable model errors stay plain errors so Temporal's retry policy handles them.
    if (error instanceof ModelError && !error.retryable) throw stageFailure('ModelRejected', error.message, { status: error.status });
    throw error;
  }
}
