/** `npm run server:stop`: stops the dev server that `npm run demo` left running. */
import fs from 'node:fs';
import { loadConfig } from '../../config';
import { devServerSettings } from './settings';

const { pidFile } = devServerSettings(loadConfig());
const pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8')) : NaN;
if (!Number.isInteger(pid)) {
  console.log('No dev server started by `npm run demo` is recorded; nothing to stop.');
} else {
  try {
    process.kill(pid, 'SIGTERM');
    console.log(`Stopped the Temporal dev server (pid ${pid}).`);
  } catch {
    console.log(`The recorded dev server (pid ${pid}) is not running.`);
  }
  fs.rmSync(pidFile, { force: true });
}
