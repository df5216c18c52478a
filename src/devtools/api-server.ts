/**
 * The records API as `npm run demo` runs it: a detached `npm run api` process that keeps
 * running after the demo, like the dev server, and stops with `npm run server:stop`. On first use
 * it makes one root user, `demo`, with a random token: the users file (`<dataDir>/api-users.json`)
 * holds only the token's hash, the token itself goes to `<dataDir>/api-token` (mode 600), where
 * `handrail handoffs` finds it.
 */
import { modulePath } from '../package-paths';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { HandrailConfig } from '../config';
import { apiTokenFile } from '../operator/handoffs';
import { sha256Token } from '../servers/api-users';
import { startDetached } from './detached';

export function apiServerSettings(config: Pick<HandrailConfig, 'dataDir' | 'apiUrl'>) {
  const url = new URL(config.apiUrl);
  return {
    url: config.apiUrl,
    // `[::1]` in a URL, `::1` to listen on.
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    usersFile: path.join(config.dataDir, 'api-users.json'),
    tokenFile: apiTokenFile(config),
    pidFile: path.join(config.dataDir, 'api.pid'),
    logFile: path.join(config.dataDir, 'api.log'),
  };
}

/** The demo user's token, made with the users file when there is no users file yet. A users
 * file of the operator's own is never rewritten (`handrail handoffs` then needs HANDRAIL_API_TOKEN). */
function ensureDemoUser(settings: ReturnType<typeof apiServerSettings>): void {
  if (fs.existsSync(settings.usersFile)) return;
  const token = crypto.randomBytes(24).toString('base64url');
  fs.mkdirSync(path.dirname(settings.usersFile), { recursive: true });
  // `mode` applies only to a new file: an old token file is replaced, not rewritten in place.
  fs.rmSync(settings.tokenFile, { force: true });
  fs.writeFileSync(settings.tokenFile, `${token}\n`, { mode: 0o600 });
  fs.writeFileSync(
    settings.usersFile,
    `${JSON.stringify({ demo: { token_sha256: sha256Token(token), role: 'root' } }, null, 2)}\n`,
    { mode: 0o600 },
  );
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/openapi.json`, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}

/** Reuses a running API at the configured URL, or starts one detached and waits for it. */
export async function ensureApiServer(
  config: HandrailConfig,
): Promise<{ url: string; tokenFile: string; startedHere: boolean }> {
  const settings = apiServerSettings(config);
  ensureDemoUser(settings);
  if (await answers(settings.url)) return { url: settings.url, tokenFile: settings.tokenFile, startedHere: false };
  await startDetached({
    what: 'the handoff records API',
    url: settings.url,
    script: modulePath('src/servers/api-main'),
    // The demo's data dir, resolved: the API must open the store the demo's worker writes.
    env: {
      ...process.env,
      HANDRAIL_DATA_DIR: config.dataDir,
      HANDRAIL_API_USERS: settings.usersFile,
      HANDRAIL_API_USERS_JSON: '',
      HANDRAIL_API_HOST: settings.host,
      HANDRAIL_API_PORT: String(settings.port),
    },
    pidFile: settings.pidFile,
    logFile: settings.logFile,
    answers: () => answers(settings.url),
  });
  return { url: settings.url, tokenFile: settings.tokenFile, startedHere: true };
}
