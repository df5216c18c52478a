/**
 * The Temporal worker logger handrail's own processes install (the demo, the shipped worker,
 * benches, `handrail/testing`): the SDK's default, less one warning that asks nothing of anyone.
 * A worker that serves only the writers' (or a stage's own) task queue registers no workflows by
 * design, and the SDK warns "No workflows registered" for it on every start.
 */
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';

const BY_DESIGN = 'No workflows registered, not polling for workflow tasks';

export function handrailLogger(level: LogLevel = 'WARN'): DefaultLogger {
  const base = new DefaultLogger(level);
  return new DefaultLogger(level, (entry: LogEntry) => {
    if (entry.message !== BY_DESIGN) base.log(entry.level, entry.message, entry.meta);
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
