/**
 * The Temporal worker logger handrail's own processes install (the demo, the shipped worker,
 * benches, `handrail/testing`): the SDK's default, less one warning that asks nothing of anyone.
 * A worker that serves only the writers' (or a stage's own) task queue registers no workflows by
 * design, and the SDK warns "No workflows registered" for it on every start. And a stage attempt
 * that stopped at a tool call waiting for a human (ToolApprovalRequired) is how asking works, not a
 * failure: it is logged at INFO, with the rest of the SDK's "Activity failed" at WARN.
 */
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';

const BY_DESIGN = 'No workflows registered, not polling for workflow tasks';

export function handrailLogger(level: LogLevel = 'WARN'): DefaultLogger {
  const base = new DefaultLogger(level);
  return new DefaultLogger(level, (entry: LogEntry) => {
    if (entry.message === BY_DESIGN) return;
    const asking = (entry.meta?.error as { type?: unknown } | undefined)?.type === 'ToolApprovalRequired';
    base.log(asking ? 'INFO' : entry.level, entry.message, entry.meta);
  });
}

/** Installs it unless the process already has a Temporal runtime (an application's own wins). */
export function installHandrailLogger(level: LogLevel = 'WARN'): void {
  try {
    Runtime.install({ logger: handrailLogger(level) });
  } catch {
    // A runtime exists already: its logger stays.
  }
}
