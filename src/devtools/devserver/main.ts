/**
 * `npm run server`: a local Temporal dev server in the foreground (Ctrl-C stops it).
 * Reuses a healthy server already listening instead of failing. With codec keys configured, also
 * starts the codec server (left running; `npm run server:stop`) and points the Web UI at it.
 */
import path from 'node:path';
import { loadConfig } from '../../config';
import { codecServerSettings, ensureCodecServer } from '../codec-server';
import { devServerSettings } from './settings';
import { ensureDevServer } from './server';

/** A path relative to where the user stands when it is below it, else absolute. */
const shown = (file: string) => (file.startsWith(process.cwd() + path.sep) ? path.relative(process.cwd(), file) : file);

async function main(): Promise<void> {
  const config = loadConfig();
  const settings = devServerSettings(config);
  // With codec keys, the Web UI decodes payloads through the codec server (docs/codec.md).
  const codec = await ensureCodecServer(config);
  const server = await ensureDevServer({ ...settings, namespace: config.namespace, codecEndpoint: codec?.url });
  console.log(`Temporal gRPC: ${server.address}`);
  console.log(`Temporal Web UI: ${server.webUiUrl}/namespaces/${config.namespace}/workflows`);
  if (codec)
    console.log(
      `Codec server: ${codec.url} (${codec.startedHere ? `log ${shown(codecServerSettings(config).logFile)}; ` : ''}npm run server:stop stops it)`,
    );
  if (!server.startedHere) return;
  console.log(
    `History: ${shown(settings.dbFile)} (SQLite), server log: ${shown(settings.logFile)}. Ctrl-C stops the server.`,
  );
  const stop = () => {
    console.log('\nStopping the Temporal dev server ...');
    void server.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  server.process?.once('exit', (code) => process.exit(code ?? 0));
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
