/** The cluster's handrail worker processes (settings.workers), each `node --import tsx <script>`. */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../../config';
import { runningPid, startDaemon, waitFor } from './processes';
import { clusterEnv, workerScript, type ClusterSettings } from './settings';

type Worker = ClusterSettings['workers'][number];

const logSize = (file: string): number => (fs.existsSync(file) ? fs.statSync(file).size : 0);

/** Starts one worker and waits for its ready line (the workflow bundle takes a few seconds). */
export async function startWorker(s: ClusterSettings, worker: Worker): Promise<void> {
  const from = logSize(worker.logFile);
  startDaemon({
    ...worker,
    // One node process (no tsx CLI wrapper in between), so the recorded pid is the worker itself.
    exe: process.execPath,
    args: ['--import', pathToFileURL(require.resolve('tsx')).href, workerScript(worker)],
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...clusterEnv(s), ...worker.env },
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
}

export const workerUp = (worker: Worker): boolean => runningPid(worker) !== undefined;
