/**
 * The codec server as `npm run server` and `npm run demo` run it when codec keys are configured:
 * a detached process on HANDRAIL_CODEC_URL that the dev server's Web UI calls
 * (`--ui-codec-endpoint`), stopped by `npm run server:stop`. No keys, no codec server.
 */
import { modulePath } from '../package-paths';
import path from 'node:path';
import { codecKeysFromEnv } from '../codec';
import type { HandrailConfig } from '../config';
import { codecServerUrl } from '../servers/codec-server';
import { startDetached } from './detached';

export function codecServerSettings(config: Pick<HandrailConfig, 'dataDir'>, env: NodeJS.ProcessEnv = process.env) {
  return {
    url: codecServerUrl(env).origin,
    pidFile: path.join(config.dataDir, 'codec-server.pid'),
    logFile: path.join(config.dataDir, 'codec-server.log'),
  };
}

async function answers(url: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  try {
    const headers = {
      'content-type': 'application/json',
      ...(env.HANDRAIL_CODEC_TOKEN ? { authorization: `Bearer ${env.HANDRAIL_CODEC_TOKEN}` } : {}),
    };
    return (
      await fetch(`${url}/decode`, {
        method: 'POST',
        headers,
        body: '{"payloads":[]}',
        signal: AbortSignal.timeout(1000),
      })
    ).ok;
  } catch {
    return false;
  }
}

/** With keys configured: reuses a codec server answering at its URL, or starts one; undefined without keys
 * (and CodecConfigError for malformed ones, before anything starts). */
export async function ensureCodecServer(
  config: Pick<HandrailConfig, 'dataDir'>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ url: string; startedHere: boolean; pidFile: string } | undefined> {
  if (!codecKeysFromEnv(env)) return undefined;
  const settings = codecServerSettings(config, env);
  if (await answers(settings.url, env)) return { url: settings.url, startedHere: false, pidFile: settings.pidFile };
  await startDetached({
    what: 'the codec server',
    url: settings.url,
    script: modulePath('src/servers/codec-server'),
    env,
    pidFile: settings.pidFile,
    logFile: settings.logFile,
    answers: () => answers(settings.url, env),
  });
  return { url: settings.url, startedHere: true, pidFile: settings.pidFile };
}
