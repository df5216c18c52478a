/**
 * Integration suite setup: one real Temporal dev server for the whole run, on free ports (never
 * a user's 7233), handrail's search attributes registered (the workflow bundle comes from
 * test/workflow-bundle-setup.ts).
 * Teardown stops the server even when tests failed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDevServer, freePort } from '../src/devtools/devserver/server';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    namespace: string;
    webUiUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-it-'));
  const started = Date.now();
  const [port, uiPort] = [await freePort(), await freePort()];
  const server = await ensureDevServer({
    port,
    uiPort,
    dbFile: path.join(tmp, 'temporal.sqlite'),
    logFile: path.join(tmp, 'temporal-server.log'),
    log: (m) => console.log(m),
  });
  console.log(
    `[handrail] Temporal dev server ${server.address} (Web UI ${server.webUiUrl}) up in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );

  project.provide('temporalAddress', server.address);
  project.provide('namespace', 'default');
  project.provide('webUiUrl', server.webUiUrl);

  return async () => {
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  };
}
