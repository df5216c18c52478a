/**
 * How a server script runs as a process (`npm run api`, `npm run codec-server`): start it, and on
 * SIGINT/SIGTERM close it and exit; a start that fails prints its message (no stack) and exits 1.
 */
export function runServerProcess(start: () => Promise<{ close(): Promise<void> }>): void {
  start().then(
    (server) => {
      const stop = async () => {
        await server.close();
        process.exit(0);
      };
      process.once('SIGINT', () => void stop());
      process.once('SIGTERM', () => void stop());
    },
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
