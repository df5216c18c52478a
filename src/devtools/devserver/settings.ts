import path from 'node:path';
import type { HandrailConfig } from '../../config';

/** Where `npm run server` and `npm run demo` put the dev server: ports from the config, history under dataDir. */
export function devServerSettings(config: HandrailConfig) {
  const [host = '127.0.0.1', port = '7233'] = config.temporalAddress.split(':');
  const uiPort = Number(new URL(config.webUiUrl).port || 8233);
  return {
    host: host === 'localhost' ? '127.0.0.1' : host,
    port: Number(port),
    uiPort,
    dbFile: path.join(config.dataDir, 'temporal.sqlite'),
    logFile: path.join(config.dataDir, 'temporal-server.log'),
    pidFile: path.join(config.dataDir, 'temporal-server.pid'),
  };
}
