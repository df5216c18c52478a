/** `npm run server:stop`: stops the dev server, the records API and the codec server that `npm run demo` (or `npm run server`) left running. */
import fs from 'node:fs';
import { loadConfig } from '../../config';
import { apiServerSettings } from '../api-server';
import { codecServerSettings } from '../codec-server';
import { devServerSettings } from './settings';

function stop(what: string, pidFile: string): void {
  const pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8')) : NaN;
  if (!Number.isInteger(pid)) {
    console.log(`No ${what} started by \`npm run demo\` is recorded; nothing to stop.`);
    return;
  }
  try {
    process.kill(pid, 'SIGTERM');
    console.log(`Stopped the ${what} (pid ${pid}).`);
  } catch {
    console.log(`The recorded ${what} (pid ${pid}) is not running.`);
  }
  fs.rmSync(pidFile, { force: true });
}

const config = loadConfig();
stop('handoff records API', apiServerSettings(config).pidFile);
stop('codec server', codecServerSettings(config).pidFile);
stop('Temporal dev server', devServerSettings(config).pidFile);
