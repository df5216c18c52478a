/**
 * Integration suite setup: one real Temporal dev server for the whole run, on free ports (never
 * a user's 7233), handrail's search attributes registered, and the workflow bundle built once.
 * A codec server with a key of the run's own sits behind the Web UI (`--ui-codec-endpoint`), for
 * the tests that run jobs with payload encryption (codecKeys); plain payloads pass it unchanged.
 * Teardown stops both even when tests failed.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { parseCodecKeys } from '../src/codec';
import { PROJECT_ROOT } from '../src/config';
import { ensureDevServer, freePort } from '../src/devtools/devserver/server';
import { buildCodecServer, codecOrigins } from '../src/servers/codec-server';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    namespace: string;
    webUiUrl: string;
    workflowBundlePath: string;
    /** HANDRAIL_CODEC_KEYS JSON the suite's codec server decodes with. */
    codecKeys: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-it-'));
  const started = Date.now();
  const [port, uiPort, codecPort] = [await freePort(), await freePort(), await freePort()];
  const codecKeys = JSON.stringify({ keys: [{ id: 'suite', key: crypto.randomBytes(32).toString('base64') }] });
  const codec = buildCodecServer({ keys: parseCodecKeys(codecKeys, 'the suite'), origins: codecOrigins({ webUiUrl: `http://localhost:${uiPort}` }, {}) });
  const codecEndpoint = await codec.listen({ host: '127.0.0.1', port: codecPort });
  const server = await ensureDevServer({
    codecEndpoint,
    port,
    uiPort,
    dbFile: path.join(tmp, 'temporal.sqlite'),
    logFile: path.join(tmp, 'temporal-server.log'),
    log: (m) => console.log(m),
  }).catch(async (err: unknown) => {
    await codec.close();
    throw err;
  });
  console.log(`[handrail] Temporal dev server ${server.address} (Web UI ${server.webUiUrl}) up in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  try {
    const bundle = await bundleWorkflowCode({
      workflowsPath: path.join(PROJECT_ROOT, 'workflows', 'index.ts'),
      logger: new DefaultLogger('WARN'),
    });
    const workflowBundlePath = path.join(tmp, 'workflow-bundle.js');
    fs.writeFileSync(workflowBundlePath, bundle.code);
    project.provide('temporalAddress', server.address);
    project.provide('namespace', 'default');
    project.provide('webUiUrl', server.webUiUrl);
    project.provide('workflowBundlePath', workflowBundlePath);
    project.provide('codecKeys', codecKeys);
  } catch (err) {
    await server.stop();
    await codec.close();
    throw err;
  }

  return async () => {
    await server.stop();
    await codec.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  };
}
