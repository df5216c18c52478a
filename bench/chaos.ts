/**
 * `npm run chaos [-- --jobs 16 --kills 3 --seed N --window-ms 20000 --settle-ms 180000 --cluster --json]`:
 * jobs under worker SIGKILLs and one server restart (see bench/chaos-run.ts), on a dev server, or
 * with `--cluster` on a cluster of its own (per-stage workers; a kill hits the general worker or
 * the writer; its PostgreSQL is restarted once too). Exits non-zero when a property fails; `--seed` replays the same schedule of kills.
 *
 * `--writes [--faults 100]`: chaos for writes (bench/chaos-writes.ts). The writer pays through
 * local payments APIs, one per reconcile mode (jobs take the modes in turn), which inject
 * `--faults` network faults (commit then drop, commit then silence, drop before commit); the
 * `--kills` land while a committed payment's answer is held; a scripted human settles the `none`
 * jobs' writes in doubt from the API's log. Prints a table per mode.
 *
 * `--cluster --soak [--write-kills 150 --faults 220 --server-restarts 3 --database-restarts 3]`:
 * the soak, both at once on a cluster of its own: jobs of every built-in pipeline, the
 * ticket-triage and ticket-hub ones paying through the payments APIs (one per reconcile mode,
 * `none` keyless) with `--faults` injected network faults, the others writing the CRM; `--kills`
 * of either worker at random moments plus `--write-kills` of the writer while a payment it sent is
 * held; the Temporal server and PostgreSQL restarted that many times, spread over the window.
 * Its workers start from a prebuilt bundle (bench/soak-worker.ts), so a restart takes seconds.
 * Every server it started stops on success, on failure and on SIGTERM or SIGINT.
 */
import { parseArgs } from 'node:util';
import { isTty, liveLine } from '../src/operator/cli/terminal';
import { runChaos } from './chaos-run';
import type { WriteChaosReport } from './chaos-writes';
import { checksTable, fmt, markdownTable, printReport, runMain } from './report';

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '16' },
    kills: { type: 'string', default: '3' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    'window-ms': { type: 'string', default: '20000' },
    // A kill during an activity costs its 10 s heartbeat timeout before the retry, a kill during
    // a workflow task its 10 s task timeout; this is an upper bound, the run ends when all close.
    'settle-ms': { type: 'string', default: '180000' },
    json: { type: 'boolean' },
    cluster: { type: 'boolean', default: false },
    writes: { type: 'boolean', default: false },
    faults: { type: 'string' },
    soak: { type: 'boolean', default: false },
    'write-kills': { type: 'string' },
    'server-restarts': { type: 'string' },
    'database-restarts': { type: 'string' },
  },
});

// The timeline and, on a terminal, a live count go to stderr: stdout is the report.
const live = liveLine(process.stderr, isTty(process.stderr));

async function main(): Promise<boolean> {
  const soak = args.soak;
  const count = (name: 'server-restarts' | 'database-restarts', soakDefault: number) =>
    args[name] !== undefined ? Number(args[name]) : soak ? soakDefault : undefined;
  const serverRestarts = count('server-restarts', 3);
  const databaseRestarts = count('database-restarts', 3);
  const report = await runChaos({
    jobs: Number(args.jobs),
    kills: Number(args.kills),
    seed: Number(args.seed),
    windowMs: Number(args['window-ms']),
    settleMs: Number(args['settle-ms']),
    cluster: args.cluster,
    ...(args.writes ? { writes: { faults: Number(args.faults ?? Math.ceil(Number(args.jobs) / 2)) } } : {}),
    ...(soak
      ? {
          soak,
          writes: {
            faults: Number(args.faults ?? Math.ceil(Number(args.jobs) / 3)),
            kills: Number(args['write-kills'] ?? Math.ceil(Number(args.jobs) / 4)),
          },
        }
      : {}),
    ...(serverRestarts !== undefined ? { serverRestarts } : {}),
    ...(databaseRestarts !== undefined ? { databaseRestarts } : {}),
    log: (m) => live.print(`chaos: ${m}`),
    onProgress: live.show,
  });
  live.clear();
  printReport('chaos', report, Boolean(args.json), () =>
    [
      `\n## ${soak ? 'Soak' : 'Chaos'}: ${report.jobs} jobs, ${report.kills} worker SIGKILLs (${Object.entries(
        report.kills_by_worker,
      )
        .map(([w, n]) => `${w} ${n}`)
        .join(
          ', ',
        )}), ${report.server_restarts} ${report.server === 'cluster' ? 'Temporal server' : report.server} restarts, ${report.database_restarts} database restarts${faultsNote(report.writes)} (seed ${report.seed})\n`,
      markdownTable(
        [
          'seconds',
          ...Object.keys(report.endings),
          'activity retries',
          'of them after a heartbeat timeout',
          'workflow task timeouts',
        ],
        [
          [
            fmt(report.seconds),
            ...Object.values(report.endings),
            report.activity_retries,
            report.heartbeat_timeouts,
            report.workflow_task_timeouts,
          ],
        ],
      ),
      ...(report.writes ? [writesTable(report.writes)] : []),
      `\n${checksTable(report.checks)}`,
    ].join('\n'),
  );
  return report.checks.every((c) => c.ok);
}

/** The injected network faults in all, for the title. */
function faultsNote(writes: WriteChaosReport | undefined): string {
  if (!writes) return '';
  const n = writes.rows.reduce((sum, r) => sum + Object.values(r.faults).reduce((a, b) => a + b, 0), 0);
  return `, ${n} injected network faults`;
}

function writesTable(writes: WriteChaosReport): string {
  const table = markdownTable(
    [
      'reconcile',
      'jobs',
      'completed',
      'remote writes',
      'duplicates',
      'requests',
      'in doubt',
      'escalated',
      'resolved happened / send',
      'blind resends',
      'kills (writer gone before the answer)',
      'faults injected (commit+drop / commit+silence / drop before commit)',
    ],
    writes.rows.map((r) => [
      r.mode,
      r.jobs,
      r.completed,
      r.remote_writes,
      r.duplicates,
      r.requests,
      r.in_doubt,
      r.escalated,
      `${r.resolved_happened} / ${r.resolved_send}`,
      r.mode === 'none' ? r.blind_resends : '–',
      `${r.kills} (${r.kills_between_send_and_record})`,
      `${Object.values(r.faults).reduce((a, b) => a + b, 0)} (${Object.values(r.faults).join(' / ')})`,
    ]),
  );
  const others = writes.other_escalations;
  return `\n### Writes, per reconcile mode\n\n${table}${others.length > 0 ? `\n\nOther escalations (approved): ${others.join('; ')}` : ''}`;
}

runMain(main);
