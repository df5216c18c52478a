/**
 * `handrail eval` and `eval compare` end to end: fresh support tickets through the built-in
 * pipelines (build A) and through build B, whose support-routing table escalates more customers
 * (one rule changed); compare names the moved jobs, fails the gates that say so and passes the
 * ones that hold; its HTML report is opened in a real headless browser (Debian's chromium through
 * playwright-core). A second case is the scale check: the recorded scenarios plus 50 fresh jobs
 * of each built-in pipeline, on a dev server the eval starts for itself, within 5 minutes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runHandrail } from '../helpers/cli';
import { CHROMIUM, ensureChromium } from '../helpers/chromium';
import { listHistoryFiles } from '../../scripts/replay/histories';
import type { EvalRun } from '../../src/eval/types';

const BUILD_B = path.join(__dirname, 'fixtures', 'eval', 'build-b.ts');
const ticket = (id: string, subject: string, body: string) => ({ id, customer_id: `cus_${id}`, subject, body });
const DATASET = [
  {
    case: 'refund',
    pipeline: 'support-routing',
    ticket: ticket(
      't1',
      'Charged twice, refund?',
      'I was charged twice, great product otherwise, thanks! Can I get a refund?',
    ),
    expect: { visits: ['billing'] },
  },
  {
    case: 'spanish',
    pipeline: 'support-routing',
    ticket: ticket(
      't2',
      'No puedo iniciar sesión',
      'Hola, no puedo iniciar sesión en mi cuenta desde ayer. ¿Pueden ayudarme?',
    ),
    expect: { visits: ['multilingual'] },
  },
  {
    case: 'email',
    pipeline: 'support-routing',
    ticket: ticket('t3', 'Change my login email', 'How do I change the email address I use to log in?'),
    expect: { visits: ['general'], write: { contains: ['email'] } },
  },
  { case: 'triage', pipeline: 'ticket-triage', ticket: ticket('t4', 'Export', 'How do I export my projects?') },
];

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-eval-'));
  fs.writeFileSync(path.join(dir, 'tickets.jsonl'), DATASET.map((e) => JSON.stringify(e)).join('\n'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const at = (file: string) => path.join(dir, file);
const address = () => ['--address', inject('temporalAddress')];
const readRun = (file: string) => JSON.parse(fs.readFileSync(at(file), 'utf8')) as EvalRun;

describe('eval compare of two builds that differ by one routing rule', () => {
  beforeAll(async () => {
    const [a, b] = await Promise.all([
      runHandrail(['eval', '--jobs', at('tickets.jsonl'), ...address(), '--out', at('a.json')], {}, 180_000),
      runHandrail(
        ['eval', '--jobs', at('tickets.jsonl'), '--pipelines', BUILD_B, ...address(), '--out', at('b.json')],
        {},
        180_000,
      ),
    ]);
    expect(a, a.stderr).toMatchObject({ code: 0 });
    expect(b, b.stderr).toMatchObject({ code: 0 });
  }, 240_000);

  it('each run records its build: the commit and a pipeline digest that differs for support-routing only', () => {
    const [a, b] = [readRun('a.json'), readRun('b.json')];
    expect(a.build.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(b.build.module).toBe(BUILD_B);
    expect(a.build.pipelines['support-routing']).not.toBe(b.build.pipelines['support-routing']);
    expect(a.build.pipelines['ticket-triage']).toBe(b.build.pipelines['ticket-triage']);
    expect(a.jobs.map((j) => [j.case, j.status])).toEqual(DATASET.map((e) => [e.case, 'completed']));
    expect(a.summary.route_expected).toMatchObject({ n: 3, mean: 1 });
    expect(a.summary.write_expected).toMatchObject({ n: 1, mean: 1 });
  });

  it('names the moved jobs and fails the gates that say so, with exit 1', async () => {
    const run = await runHandrail(
      [
        'eval',
        'compare',
        at('a.json'),
        at('b.json'),
        '--gate',
        'route_expected>=-2pt',
        '--gate',
        'moved_jobs<=0',
        '--gate',
        'cost_per_job<=+10%',
        '--html',
        at('report.html'),
      ],
      {},
    );
    expect(run.code, run.stderr).toBe(1);
    // The refund ticket is a happy customer's: it stays with billing; the others now escalate.
    expect(run.stdout).toMatch(/Moved jobs \(route or ending differs\): 2/);
    expect(run.stdout).toMatch(
      /spanish\s+support-routing\s+classify>multilingual>review>crm-note → completed\s+classify>escalation>review>crm-note → completed/,
    );
    expect(run.stdout).toMatch(/email\s+support-routing\s+classify>general>review>crm-note/);
    expect(run.stdout).toMatch(/route_expected\s+100%\s+33\.3%\s+-66\.7pt/);
    expect(run.stdout).toContain(
      'FAIL  route_expected>=-2pt: route_expected.mean changed by -66.6667pt; the gate wants >= -2pt',
    );
    expect(run.stdout).toContain('FAIL  moved_jobs<=0: moved_jobs.mean is 2; the gate wants <= 0');
    expect(run.stdout).toMatch(/pass {2}cost_per_job<=\+10%/);
  });

  it('passes when every gate holds, with exit 0', async () => {
    const run = await runHandrail(
      ['eval', 'compare', at('a.json'), at('b.json'), '--gate', 'moved_jobs<=2', '--json'],
      {},
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ matched: 4, gates: [{ gate: 'moved_jobs<=2', ok: true }] });
  });

  it('a gate that is not one is a usage error (exit 2)', async () => {
    const run = await runHandrail(['eval', 'compare', at('a.json'), at('b.json'), '--gate', 'pass_rate drops'], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--gate: gate "pass_rate drops" is not METRIC/);
  });

  it('the HTML report, in a real headless browser: a point per job and build, the distributions, the failed gates', async (ctx) => {
    const unavailable = ensureChromium();
    if (unavailable) return ctx.skip(`chromium unavailable: ${unavailable}`);
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      await page.goto(`file://${at('report.html')}`);
      // Every job a critic judged has a point in each build: 4 jobs, 2 builds.
      await expect.poll(() => page.locator('#cost-vs-pass circle.job-point').count()).toBe(8);
      expect(await page.locator('#cost-vs-pass circle[data-build="b"][data-case="spanish"]').count()).toBe(1);
      expect(await page.locator('svg.distribution[data-scorer="route_expected"] rect').count()).toBeGreaterThan(0);
      expect(await page.locator('#gates').textContent()).toBe('2 of 3 gate(s) failed');
      const box = await page.locator('#cost-vs-pass').boundingBox();
      expect(box?.width).toBeGreaterThan(400);
      // Offline: the page asked for nothing but itself.
      expect(requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 120_000);
});

describe('eval at scale', () => {
  it('the recorded scenarios plus 50 fresh jobs of each built-in pipeline, on a dev server of its own, in under 5 minutes', async () => {
    const histories = listHistoryFiles();
    const run = await runHandrail(
      ['eval', ...histories, '--jobs', path.join('data', 'eval', 'built-in.jsonl'), '--out', at('scale.json')],
      {},
      300_000,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.ms).toBeLessThan(300_000);
    const result = readRun('scale.json');
    expect(result.dataset).toMatchObject({ fresh: 200 });
    expect(result.dataset.histories).toBeGreaterThanOrEqual(12);
    expect(result.summary.completed!.mean).toBeGreaterThan(0.9);
  }, 330_000);
});
