/**
 * A test file's process exits when the vitest process that forked it is gone (a killed
 * `npm test`): its Temporal workers would otherwise retry a stopped server for ever. The dev
 * server itself goes with the vitest process (src/devtools/devserver/server.ts, TETHER). By
 * SIGKILL, since vitest replaces `process.exit` in its workers with one that throws.
 */
const EXITS_WITH_RUNNER = Symbol.for('handrail.exitsWithRunner');
const flags = globalThis as { [EXITS_WITH_RUNNER]?: true };
if (process.send && !flags[EXITS_WITH_RUNNER]) {
  flags[EXITS_WITH_RUNNER] = true;
  process.once('disconnect', () => process.kill(process.pid, 'SIGKILL'));
}
