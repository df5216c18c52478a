/** `npm run cluster status`: each part, its address and whether it answers. */
import fs from 'node:fs';
import path from 'node:path';
import { postgresUp } from './postgres';
import { runningPid } from './processes';
import { frontendAddress, webUiUrl, type ClusterSettings } from './settings';
import { temporalServerUp } from './temporal-server';
import { uiServerUp } from './ui-server';
import { workerUp } from './workers';

export interface PartStatus {
  part: string;
  address: string;
  up: boolean;
  pid?: number;
}

/** The postmaster's pid (first line of postmaster.pid), when that file exists. */
export function postmasterPid(s: ClusterSettings): number | undefined {
  try {
    return Number(fs.readFileSync(path.join(s.postgres.root, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
}

export async function clusterStatus(s: ClusterSettings): Promise<PartStatus[]> {
  const pg = await postgresUp(s);
  return [
    { part: 'postgresql', address: `${s.host}:${s.postgres.port}`, up: pg, pid: pg ? postmasterPid(s) : undefined },
    { part: 'temporal-server', address: frontendAddress(s), up: await temporalServerUp(s), pid: runningPid(s.server) },
    { part: 'ui-server', address: webUiUrl(s), up: await uiServerUp(s), pid: runningPid(s.ui) },
    ...s.workers.map((w) => ({
      part: w.name,
      address: `task queue ${w.taskQueues.join(', ')}`,
      up: workerUp(w),
      pid: runningPid(w),
    })),
  ];
}

/** An aligned plain-text table, one part per line. */
export function statusTable(rows: PartStatus[]): string {
  const cells = [
    ['PART', 'ADDRESS', 'STATE', 'PID'],
    ...rows.map((r) => [
      r.part,
      r.address,
      r.up ? 'up' : r.pid ? 'not answering' : 'down',
      r.pid ? String(r.pid) : '-',
    ]),
  ];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '))
    .join('\n');
}
