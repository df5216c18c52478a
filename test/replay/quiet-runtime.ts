/**
 * Replay suite logging: core logs every determinism failure as a WARN, and the breakage tests
 * cause them on purpose; the tests' assertions carry the reason instead.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';

export const replayLogger = new DefaultLogger('WARN');

try {
  Runtime.install({ logger: replayLogger, telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
} catch {
  // Already installed by the other replay file in this process.
}
