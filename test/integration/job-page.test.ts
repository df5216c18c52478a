/**
 * The job page (`GET /jobs/{id}` on the records API server) in a real headless browser:
 * Debian's chromium driven by playwright-core, against a live rail. A job that completes shows
 * each hop's acks and its end; a job that waits on a human shows the escalation and its form,
 * and the form decides it through the records API (a refusal shows the API's message) and the
 * page follows the job to its end; a dropped connection resumes with Last-Event-ID and shows
 * nothing twice. Text from the stream is shown as text, never as markup. The page loads without
 * a token; its stream and every API route still need one.
 *
 * HANDRAIL_SCREENSHOTS=1 writes docs/images/job-page-*.png (docs/operate.md "The job page").
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { builtInActivities } from '../../activities/built-in';
import { researchBriefActivities } from '../../activities/research-brief';
import { startResearchModel } from '../../src/devtools/research-model';
import { cancelJob, jobResult, startJob } from '../../src/operator/client';
import { apiUsers, sha256Token } from '../../src/servers/api-users';
import { buildHandoffsApi } from '../../src/servers/handoffs-api';
import { journalText } from '../../src/stream/journal';
import { CHROMIUM, ensureChromium } from '../helpers/chromium';
import { jobRequest, startRail, waitForStatus, type Rail } from '../helpers/rail';

const TOKEN = 'tok-ana-job-page';
const users = apiUsers({ ana: { token_sha256: sha256Token(TOKEN), role: 'user' } });
const SCREENSHOTS = process.env.HANDRAIL_SCREENSHOTS === '1' ? path.resolve('docs', 'images') : undefined;

let unavailable: string | undefined;
let browser: Browser | undefined;
let rail: Rail;
let app: ReturnType<typeof buildHandoffsApi>;
let base: string;

beforeAll(async () => {
  rail = await startRail();
  app = buildHandoffsApi({
    store: rail.store,
    users,
    temporal: rail.client,
    workspaces: { [rail.client.options.namespace]: BUILT_IN_PIPELINES.map((p) => p.name) },
  });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  unavailable = ensureChromium();
  if (unavailable) {
    console.warn(`[job-page] browser tests skipped: ${unavailable}`);
    return;
  }
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}, 20 * 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await rail?.stop();
});

async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `job-page-${name}.png`), fullPage: true });
}

/** A page on the job, followed with the token typed into its form; page errors fail the test. */
async function openJob(jobId: string, at = base): Promise<{ page: Page; errors: string[] }> {
  const page = await browser!.newPage({ viewport: { width: 1200, height: 860 } });
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    // The CSP refusing anything is a page error too.
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) errors.push(msg.text());
  });
  await page.goto(`${at}/jobs/${encodeURIComponent(jobId)}`);
  await expect.poll(() => page.getByTestId('job-id').textContent()).toBe(jobId);
  await page.getByTestId('token').fill(TOKEN);
  await page.getByTestId('token-submit').click();
  return { page, errors };
}

/** The acks the timeline shows, in its order: hop, stage, kind, reason, actor. */
const shownAcks = (page: Page) =>
  page
    .getByTestId('timeline')
    .locator('li[data-ack]')
    .evaluateAll((items) =>
      items.map((e) => [
        Number(e.getAttribute('data-hop')),
        e.getAttribute('data-stage'),
        e.getAttribute('data-ack'),
        e.querySelector('.reason')!.textContent,
        e.getAttribute('data-actor'),
      ]),
    );

const endedAs = (page: Page) =>
  page
    .getByTestId('status')
    .getAttribute('data-ended')
    .then(async (ended) => (ended === 'true' ? page.getByTestId('status').getAttribute('data-status') : undefined));

describe('the job page', () => {
  it('loads without a token (a static page with a strict CSP); its stream and the API still need one', async () => {
    const page = await fetch(`${base}/jobs/any-job`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'.*script-src 'sha256-/);
    expect(await page.text()).toContain('data-testid="timeline"');
    expect((await fetch(`${base}/jobs/any-job`, { method: 'HEAD' })).status).toBe(200);
    for (const [method, url] of [
      ['GET', '/jobs/any-job/events'],
      ['POST', '/jobs/any-job/events'],
      ['GET', '/handoffs/hr_x'],
      ['GET', `/workspaces/${rail.client.options.namespace}/projects/ticket-triage/handoffs`],
    ] as const)
      expect((await fetch(`${base}${url}`, { method })).status, `${method} ${url}`).toBe(401);
  });

  it("a job that completes: each hop's ack with its reason in the timeline, the wallet as the rail settled it, the end", async (ctx) => {
    if (unavailable || !browser) return ctx.skip(`chromium unavailable: ${unavailable}`);
    const request = jobRequest();
    await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    const { page, errors } = await openJob(request.job_id);
    try {
      await expect.poll(() => endedAs(page), { timeout: 60_000 }).toBe('completed');
      const result = await jobResult(rail.client, request.job_id);
      const expected = result.acks.map((a) => [a.hop, a.stage, a.ack, a.reason, a.actor ?? null]);
      const byHop = (rows: unknown[][]) => [...rows].sort((x, y) => (x[0] as number) - (y[0] as number));
      expect(await shownAcks(page)).toEqual(byHop(expected));
      expect(await page.getByTestId('ending').textContent()).toBe(
        `finished completed${result.reason ? `: ${result.reason}` : ''}`,
      );
      const wallet = page.getByTestId('wallet');
      expect(Number(await wallet.getAttribute('data-spent'))).toBe(result.spent_usd);
      expect(Number(await wallet.getAttribute('data-remaining'))).toBe(result.package.budget.usd_remaining);
      expect(await page.getByTestId('escalation').isHidden()).toBe(true);
      // The token stays with the tab: a reload follows again without asking, and shows the same.
      await page.reload();
      await expect.poll(() => endedAs(page), { timeout: 30_000 }).toBe('completed');
      expect(await page.getByTestId('token-form').isHidden()).toBe(true);
      expect(await shownAcks(page)).toEqual(byHop(expected));
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('a job waiting on a human: the escalation and its form; a refused decision shows why; a top-up through the form decides it through the records API and the page follows the job to its end', async (ctx) => {
    if (unavailable || !browser) return ctx.skip(`chromium unavailable: ${unavailable}`);
    const request = jobRequest({ owner: 'ana', budget: { usd: 0.005, revisions: 1 } });
    const { handle } = await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    const waiting = await waitForStatus(handle, 'escalated');
    // Model text as a stage's worker writes it, with markup in it: shown as text, never run.
    const markup = 'Checking the plan <img src=x onerror="window.__injected=1"><b>not bold</b>';
    await journalText(rail.store, request.job_id, { hop: 0, stage: 'intake', delta: markup, part: 0 });

    const { page, errors } = await openJob(request.job_id);
    try {
      const escalation = page.getByTestId('escalation');
      await escalation.waitFor({ state: 'visible', timeout: 30_000 });
      expect(await page.getByTestId('escalation-reasons').locator('li').allTextContents()).toEqual(
        waiting.escalation!.reasons,
      );
      const form = page.getByTestId('decide-form');
      expect(
        await form
          .getByTestId('decide-action')
          .locator('option')
          .evaluateAll((o) => o.map((x) => x.getAttribute('value'))),
      ).toEqual(waiting.escalation!.options);
      // The record the rail began for the escalation is found; then the form can be sent.
      await expect.poll(() => page.getByTestId('decide-submit').isEnabled(), { timeout: 30_000 }).toBe(true);
      const recordId = await page.getByTestId('escalation-record').getAttribute('data-record');
      const record = (await rail.store.getEscalationRecord(recordId!))!;
      expect(record).toMatchObject({ job_id: request.job_id, created_by: 'rail', state: 'open' });

      const liveText = page.getByTestId('live-text');
      await expect.poll(() => liveText.locator('pre').first().textContent(), { timeout: 30_000 }).toBe(markup);
      expect(await liveText.locator('img, b').count()).toBe(0);
      expect(await page.evaluate(() => (globalThis as { __injected?: number }).__injected)).toBeUndefined();
      await screenshot(page, 'escalated');

      // A top-up without an amount: the job refuses it, the page shows the API's answer.
      await page.getByTestId('decide-action').selectOption('top_up');
      await page.getByTestId('decide-submit').click();
      await expect
        .poll(() => page.getByTestId('decide-result').textContent())
        .toMatch(/^refused \(409 decision_refused\): .*top_up needs usd > 0 or revisions > 0/);
      expect((await handle.query('status')) as { status: string }).toMatchObject({ status: 'escalated' });

      await page.getByTestId('decide-usd').fill('1');
      await page.getByTestId('decide-note').fill('covered: duplicate charge');
      await page.getByTestId('decide-submit').click();
      await expect.poll(() => page.getByTestId('decide-result').textContent()).toMatch(/^decided: top_up by ana/);

      // The page follows the job on: the decision in the timeline, the escalation gone, the end.
      await expect.poll(() => endedAs(page), { timeout: 60_000 }).toBe('completed');
      const result = await jobResult(rail.client, request.job_id);
      expect(result.status).toBe('completed');
      const decision = result.acks.find((a) => a.actor === 'ana')!;
      expect(decision.reason).toContain('covered: duplicate charge');
      const shown = await shownAcks(page);
      expect(shown).toContainEqual([decision.hop, decision.stage, decision.ack, decision.reason, 'ana']);
      expect(shown.length).toBe(result.acks.length);
      expect(await escalation.isHidden()).toBe(true);
      expect(Number(await page.getByTestId('wallet').getAttribute('data-spent'))).toBe(result.spent_usd);
      expect((await rail.store.getEscalationRecord(record.id))!.accepted_by).toBe('ana');
      await screenshot(page, 'decided');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("a job waiting on a tool call: the page shows the call as text with its digest; the form's run-it, with arguments edited where the grant allows, decides that call through the records API, and a word on another digest is a 409", async (ctx) => {
    if (unavailable || !browser) return ctx.skip(`chromium unavailable: ${unavailable}`);
    // The research pipeline, its researcher's library search granted with approval: 'always'.
    const model = await startResearchModel();
    Object.assign(process.env, {
      HANDRAIL_MODEL_BASE_URL: model.baseUrl,
      HANDRAIL_MODEL: 'research-offline',
      HANDRAIL_MODEL_USD_PER_MTOK_IN: '1',
      HANDRAIL_MODEL_USD_PER_MTOK_OUT: '4',
    });
    const asking = await startRail({
      store: rail.store,
      stageActivities: (deps) => ({
        ...builtInActivities(deps),
        ...researchBriefActivities(deps, undefined, { approvals: { search: 'always' } }),
      }),
    });
    const request = { ...jobRequest({ owner: 'ana' }), pipeline: 'research-brief' };
    const { handle } = await startJob(asking.client, request, asking);
    const { page, errors } = await openJob(request.job_id);
    try {
      const waiting = await waitForStatus(handle, 'escalated');
      const call = waiting.escalation!.tool_call!;
      const shown = page.getByTestId('escalation-tool-call');
      await shown.waitFor({ state: 'visible', timeout: 30_000 });
      expect(await page.locator('#esc-call-name').textContent()).toBe('search');
      expect(await page.locator('#esc-call-digest').textContent()).toBe(call.digest);
      expect(JSON.parse((await page.locator('#esc-call-args').textContent())!)).toEqual(call.args);
      await expect.poll(() => page.getByTestId('decide-submit').isEnabled(), { timeout: 30_000 }).toBe(true);
      const recordId = (await page.getByTestId('escalation-record').getAttribute('data-record'))!;
      // A word on a call this escalation does not wait on: refused, with the digest it waits on.
      const refused = await fetch(`${base}/handoffs/${recordId}/decide`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'idempotency-key': 'tool-call-other-digest',
        },
        body: JSON.stringify({
          action: 'approve',
          tool_call: { digest: `sha256:${'1'.repeat(64)}`, verdict: 'approve' },
        }),
      });
      expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([409, 'decision_refused']);
      await screenshot(page, 'tool-call');
      await page.getByTestId('decide-action').selectOption('approve');
      expect(await page.getByTestId('decide-verdict').isVisible()).toBe(true);
      await page.getByTestId('decide-verdict').selectOption('approve');
      // research-brief's search grant allows edits: the model's arguments, to change.
      expect(JSON.parse(await page.getByTestId('decide-args').inputValue())).toEqual(call.args);
      await page.getByTestId('decide-args').fill('not json');
      await page.getByTestId('decide-submit').click();
      await expect
        .poll(() => page.getByTestId('decide-result').textContent())
        .toBe('the arguments must be a JSON object');
      await page.getByTestId('decide-args').fill('{"query": "refund policy"}');
      await page.getByTestId('decide-submit').click();
      await expect.poll(() => page.getByTestId('decide-result').textContent()).toMatch(/^decided: approve by ana/);
      // The rail took the word for that call: the next wait (if any) is another call.
      const acks = (await handle.query('acks')) as {
        actor?: string;
        reason: string;
        tool_call?: { edited?: boolean };
      }[];
      expect(acks.filter((a) => a.actor === 'ana').map((a) => a.tool_call?.edited)).toEqual([true]);
      await cancelJob(asking.client, request.job_id);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
      await asking.stop();
      await model.close();
    }
  });

  it('a dropped connection resumes with Last-Event-ID from the last event shown, and nothing shows twice', async (ctx) => {
    if (unavailable || !browser) return ctx.skip(`chromium unavailable: ${unavailable}`);
    const request = jobRequest();
    await startJob(rail.client, request, { taskQueue: rail.taskQueue });
    const result = await jobResult(rail.client, request.job_id);
    // A proxy in front of the API that cuts the first stream after its third numbered event.
    const streams: { lastEventId: string | undefined; cutAfter?: string }[] = [];
    const upstream = new URL(base);
    const proxy = http.createServer((req, res) => {
      const events = /\/events(\?|$)/.test(req.url ?? '');
      const seen = events ? streams.push({ lastEventId: req.headers['last-event-id'] as string | undefined }) : 0;
      const forward = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          if (!events || seen !== 1) return void up.pipe(res);
          let buffer = '';
          let numbered = 0;
          up.setEncoding('utf8');
          up.on('data', (chunk: string) => {
            buffer += chunk;
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0 && streams[0]!.cutAfter === undefined) {
              const frame = buffer.slice(0, end + 2);
              buffer = buffer.slice(end + 2);
              const id = /^id: (\d+)$/m.exec(frame)?.[1];
              if (id !== undefined && ++numbered === 3) {
                // Sent, and read by the page, before the connection drops.
                streams[0]!.cutAfter = id;
                up.destroy();
                res.write(frame, () => setTimeout(() => res.destroy(), 300));
              } else res.write(frame);
            }
          });
        },
      );
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as { port: number };
    const { page, errors } = await openJob(request.job_id, `http://127.0.0.1:${port}`);
    try {
      await expect.poll(() => endedAs(page), { timeout: 60_000 }).toBe('completed');
      expect(streams[0]!.cutAfter).toMatch(/^\d+$/);
      expect(streams[0]!.lastEventId).toBeUndefined();
      expect(streams[1]!.lastEventId).toBe(streams[0]!.cutAfter);
      const shown = await shownAcks(page);
      expect(shown).toHaveLength(result.acks.length);
      expect(new Set(shown.map((row) => JSON.stringify(row))).size).toBe(shown.length);
      expect(await page.getByTestId('timeline').locator(':scope > li').count()).toBe(
        new Set(result.acks.map((a) => `${a.hop}:${a.stage}`)).size,
      );
      expect(errors.filter((e) => !/network|ERR_|Failed to fetch/i.test(e))).toEqual([]);
    } finally {
      await page.close();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});
