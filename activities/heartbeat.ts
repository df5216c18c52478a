/**
 * Stage activities heartbeat while they work, so the server notices a killed worker, or a
 * completion it never received, within the card's heartbeatTimeout instead of waiting out the
 * whole startToCloseTimeout (two minutes for a model call) before retrying.
 */
import { asyncLocalStorage } from '@temporalio/activity';

/** Runs `work`, heartbeating a few times per heartbeat timeout; outside an activity (unit tests
 * call stages directly) or without a heartbeat timeout it just runs `work`. */
export async function whileHeartbeating<T>(work: () => Promise<T>): Promise<T> {
  const context = asyncLocalStorage.getStore();
  const timeoutMs = context?.info.heartbeatTimeoutMs;
  if (!context || !timeoutMs) return work();
  // The SDK throttles what it sends to the server; this only has to beat well within the timeout.
  const beat = setInterval(() => context.heartbeat(), Math.max(100, Math.floor(timeoutMs / 3)));
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}
