/** Calling the configured chat model from a stage: model errors become Temporal-shaped failures. */
import type { ChatMessage, ChatModel, ChatReply } from '../src/model';
import { ModelError } from '../src/model';
import { stageFailure } from './failures';

export async function askModel(model: ChatModel, messages: ChatMessage[], options?: { maxTokens?: number; json?: boolean }): Promise<ChatReply> {
  try {
    return await model.complete(messages, options);
  } catch (error) {
    // Retryable model errors stay plain errors so Temporal's retry policy handles them.
    if (error instanceof ModelError && !error.retryable) throw stageFailure('ModelRejected', error.message, { status: error.status });
    throw error;
  }
}
