/**
 * A long command that starts servers (a bench's lab, a harness's own cluster) stops them on SIGTERM
 * and SIGINT as it does on success and failure. Node's default for both signals ends the process
 * at once, and `Runtime.install`'s handler only shuts its workers down: a cluster's PostgreSQL,
 * Temporal server and Web UI, started detached, kept running, and a lab's data dir stayed behind.
 *
 * One registry per process: whatever starts servers registers how to stop them and gets that stop
 * back, run once whoever asks first. The first signal runs every registered stop, the newest
 * first, then exits as the signal would have (130, 143). A signal while they run is ignored: Ctrl-C
 * reaches a command twice when its parent (scripts/provision.js, `npm run`) passes it on as well.
 */
import os from 'node:os';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
const stops = new Set<() => Promise<void>>();
let stopping = false;

function onSignal(signal: NodeJS.Signals): void {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`handrail: ${signal}: stopping the servers this command started\n`);
  // What the command was doing fails as its servers go (a client call retried on a closed channel
  // throws from a timer): such an error must not end the process before the servers are stopped.
  const failing = (err: unknown) =>
    process.stderr.write(`handrail: while stopping: ${err instanceof Error ? err.message : String(err)}\n`);
  process.on('uncaughtException', failing);
  process.on('unhandledRejection', failing);
  void (async () => {
    for (const stop of [...stops].reverse()) {
      await stop().catch((err: unknown) =>
        process.stderr.write(
          `handrail: stopping after ${signal}: ${err instanceof Error ? err.message : String(err)}\n`,
        ),
      );
    }
    process.exit(128 + os.constants.signals[signal]);
  })();
}

/**
 * Registers `stop` to run on SIGTERM or SIGINT, and returns it made to run once: call it when the
 * command is done with its servers, on success and on failure (it then unregisters). A signal that
 * came first has it running already, and the call waits for that run.
 */
export function stopOnSignal(stop: () => Promise<void>): () => Promise<void> {
  let run: Promise<void> | undefined;
  const once = () => (run ??= stop());
  if (stops.size === 0) for (const signal of SIGNALS) process.on(signal, onSignal);
  stops.add(once);
  return async () => {
    try {
      await once();
    } finally {
      stops.delete(once);
      // Once a signal came, the process is on its way out: the handler stays (it ignores the next).
      if (stops.size === 0 && !stopping) for (const signal of SIGNALS) process.off(signal, onSignal);
    }
  };
}

/**
 * Runs `start`, with `stop` registered for what it starts: a signal during the start stops it once
 * the start has settled (it cannot be cut short), a start that fails is stopped before its error
 * is thrown, and the returned `stop` (run once) is the one to call when done.
 */
export async function startStoppable<T>(
  start: () => Promise<T>,
  stop: () => Promise<void>,
): Promise<{ started: T; stop: () => Promise<void> }> {
  // Registered first: `start` may run for a while before its first await (a cluster's binaries).
  // A signal is handled from the event loop, so `starting` is set by the time this runs.
  const stopOnce = stopOnSignal(async () => {
    await starting.catch(() => undefined);
    await stop();
  });
  const starting = start();
  try {
    return { started: await starting, stop: stopOnce };
  } catch (err) {
    // The start's error is the one to hear about.
    await stopOnce().catch(() => undefined);
    throw err;
  }
}
