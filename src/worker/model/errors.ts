/** What a model call's failure means for the stage: retry the activity, or give up. */
import { APICallError } from 'ai';

/**
 * `retryable` false: the request itself is wrong (auth, unknown model, bad reply shape) and
 * sending it again cannot help. true: overload, server error, timeout, network.
 */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The AI SDK's errors in the stage's terms. */
export function asModelError(error: unknown): ModelError {
  if (error instanceof ModelError) return error;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined)
      return new ModelError(`model endpoint unreachable: ${messageOf(error.cause ?? error)}`, true);
    // 408/409/429 and 5xx are the server's weather; other 4xx are our request.
    const retryable = status >= 500 || [408, 409, 429].includes(status);
    return new ModelError(
      `model endpoint answered ${status}: ${(error.responseBody ?? error.message).slice(0, 300)}`,
      retryable,
      status,
    );
  }
  if (error instanceof Error && error.name === 'TimeoutError')
    return new ModelError(`model endpoint did not answer in time: ${error.message}`, true);
  // A reply the SDK could not read (not JSON, no choices, a bad shape): sending it again won't help.
  return new ModelError(`model reply unreadable: ${messageOf(error)}`, false);
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
