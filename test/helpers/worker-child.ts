/** The side of a forked test worker (worker-process.ts): its settings, and how it ends. */

/** A setting the parent must pass. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

/** Runs the worker's `main`, exiting 0 when it returns, 1 (with the error) when it throws. */
export function runWorkerChild(name: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: Error) => {
      console.error(`${name}: ${err.stack ?? err.message}`);
      process.exit(1);
    },
  );
}
