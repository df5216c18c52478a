/** The cluster's handrail worker processes (settings.workers), each `node --import tsx <script>`. */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { CRM_DATABASE_URL_ENV, codeRoot } from '../../config';
import { runningPid, startDaemon, waitFor } from './processes';
import { workerScript, type ClusterSettings } from './settings';

type Worker = ClusterSettings['workers'][number];

const logSize = (file: string): number => (fs.existsSync(file) ? fs.statSync(file).size : 0);

/** A worker's environment: the caller's, less any CRM URL it happens to hold (only the writer's
 * own spec brings one), plus where to connect (`clusterEnv`, say) and the worker's own. */
export function workerEnv(
  connect: Record<string, string>,
  worker: Pick<Worker, 'env'>,
  parent: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const { [CRM_DATABASE_URL_ENV]: _dropped, ...inherited } = parent;
  return { ...inherited, ...connect, ...worker.env };
}

/** Starts one worker and waits for its ready line (the workflow bundle takes a few seconds);
 * returns its pid. */
export async function startWorker(worker: Worker, env: NodeJS.ProcessEnv): Promise<number> {
  const from = logSize(worker.logFile);
  const pid = startDaemon({
    ...worker,
    // One node process (no tsx CLI wrapper in between), so the recorded pid is the worker itself.
    exe: process.execPath,
    args: ['--import', pathToFileURL(require.resolve('tsx')).href, workerScript(worker)],
    cwd: codeRoot,
    env,
  });
  const ready = async () => {
    const fd = fs.openSync(worker.logFile, 'r');
    try {
      const buffer = Buffer.alloc(logSize(worker.logFile) - from);
      fs.readSync(fd, buffer, 0, buffer.length, from);
      return worker.readyLine.test(buffer.toString('utf8'));
    } finally {
      fs.closeSync(fd);
    }
  };
  await waitFor(`worker "${worker.name}" did not start polling`, ready, { ...worker, timeoutMs: 120_000 });
  return pid;
}

export const workerUp = (worker: Worker): boolean => runningPid(worker) !== undefined;
