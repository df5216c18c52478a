/** The cluster's standalone Temporal Web UI (temporalio/ui-server), pointed at the cluster's frontend. */
import fs from 'node:fs';
import path from 'node:path';
import type { ClusterBinaries } from './binaries';
import { runningPid, startDaemon, waitFor } from './processes';
import { uiServerConfigYaml } from './server-config';
import { SERVER_CONFIG_ENV, frontendAddress, webUiUrl, type ClusterSettings } from './settings';

export async function uiServerUp(s: ClusterSettings): Promise<boolean> {
  if (runningPid(s.ui) === undefined) return false;
  try {
    return (await fetch(webUiUrl(s), { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

export async function startUiServer(s: ClusterSettings, bins: ClusterBinaries): Promise<void> {
  const configDir = path.join(s.ui.root, 'config');
  fs.mkdirSync(configDir, { recursive: true });
  fs.writeFileSync(
    path.join(configDir, `${SERVER_CONFIG_ENV}.yaml`),
    uiServerConfigYaml({ temporalAddress: frontendAddress(s), host: s.host, port: s.ui.port, namespace: s.namespace }),
  );
  startDaemon({
    ...s.ui,
    exe: bins.uiServer,
    args: ['--root', s.ui.root, '--env', SERVER_CONFIG_ENV, 'start'],
    cwd: s.ui.root,
  });
  await waitFor('the Web UI did not come up', () => uiServerUp(s), { ...s.ui, timeoutMs: 30_000 });
}
