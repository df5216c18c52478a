/**
 * The operator's Web UI path, proven in a real browser: Debian's chromium driven by
 * playwright-core against the suite dev server's Web UI (2.42), with a live worker so current
 * details and queries answer. Set HANDRAIL_SCREENSHOT_DIR=docs/screenshots to refresh the
 * walk-through screenshots in docs/operate.md. A second case runs a job with payload encryption
 * on a dev server started with --ui-codec-endpoint and reads it decoded (docs/codec.md).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM, ensureChromium } from '../helpers/chromium';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { handrailDataConverter, parseCodecKeys } from '../../src/codec';
import { ensureDevServer, freePort, type DevServer } from '../../src/devtools/devserver/server';
import { getJob, jobsQuery, jobResult, startJob } from '../../src/operator/client';
import { buildCodecServer, codecOrigins } from '../../src/servers/codec-server';
import { jobRequest, startRail, type Rail } from '../helpers/rail';

const SCREENSHOT_DIR = process.env.HANDRAIL_SCREENSHOT_DIR;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOT_DIR) return;
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`) });
}

/** Runs the `package` query from the workflow page's Queries tab and checks it answers with the job's package. */
async function expectPackageQuery(page: Page, jobId: string): Promise<void> {
  await page.getByTestId('queries-tab').click();
  await page.getByTestId('query-select-button').click();
  await page.getByRole('option', { name: /^package/ }).click();
  await page.getByRole('button', { name: 'Run Query' }).click();
  await expect
    .poll(() => page.getByTestId('query-result').innerText(), { timeout: 20_000 })
    .toContain('"schema": "handoff.v1"');
  expect(await page.getByTestId('query-result').innerText()).toContain(`"job_id": "${jobId}"`);
}

const updateDialog = (page: Page) => page.getByRole('dialog', { name: 'Send an Update' });

/** Sends an update from the job's page, through the UI's "Send an Update" dialog. */
async function sendUpdate(page: Page, name: string, input: object): Promise<void> {
  const dialog = updateDialog(page);
  await page.getByRole('button', { name: 'More Actions' }).click();
  await page.getByRole('menu').filter({ hasText: 'Send an Update' }).getByText('Send an Update').click();
  await dialog.getByTestId('update-select-button').click();
  await dialog.getByRole('option', { name: new RegExp(`^${name}`) }).click();
  await dialog.getByRole('textbox').last().click();
  await page.keyboard.insertText(JSON.stringify(input));
  // The JSON editor commits its text on blur; a click that blurs it does not also submit.
  await dialog.getByTestId('update-id').click();
  await dialog.getByTestId('confirm-modal-button').click();
}

let unavailable: string | undefined;
let browser: Browser | undefined;
let rail: Rail;

beforeAll(async () => {
  unavailable = ensureChromium();
  if (unavailable) {
    console.warn(`[web-ui] browser test skipped: ${unavailable}`);
    return;
  }
  rail = await startRail();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 20 * 60_000);

afterAll(async () => {
  await browser?.close();
  await rail?.stop();
});

describe('Temporal Web UI in a real browser', () => {
  it('lists escalated jobs by search attribute, shows summary and details, runs the package query, sends decide (refused, then accepted) and the job completes', async (ctx) => {
    if (unavailable || !browser) return ctx.skip(`chromium unavailable: ${unavailable}`);
    // An empty wallet escalates at draft and waits for a human (see handoff-job.test.ts).
    const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
    await startJob(rail.client, request, rail);
    await waitFor('escalation', async () =>
      (await getJob(rail.client, request.job_id)).status.status === 'escalated' ? true : undefined,
    );

    const ui = `${inject('webUiUrl')}/namespaces/${inject('namespace')}`;
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });

    // 1. The list, filtered on the rail's search attributes (the same query `handrail list` sends).
    const query = jobsQuery({ status: 'escalated', taskQueue: rail.taskQueue });
    await waitFor(
      'the job in the filtered list',
      async () => {
        await page.goto(`${ui}/workflows?query=${encodeURIComponent(query)}`);
        const row = page.getByRole('link', { name: request.job_id, exact: true });
        // The list is rendered by the page's own scripts after load; visibility lags a second or so.
        return (await row.waitFor({ state: 'visible', timeout: 5_000 }).then(
          () => true,
          () => false,
        ))
          ? true
          : undefined;
      },
      60_000,
    );
    await screenshot(page, '1-escalated-jobs');

    // 2. The job: its summary (set at start) and current details (set by the rail, read through the worker).
    await page.getByRole('link', { name: request.job_id, exact: true }).click();
    await page.getByTestId('user-metadata-tab').click();
    // Summary and details are markdown, each rendered by the UI in a frame of its own.
    const metadataText = async () => {
      const frames = page.frames().filter((f) => f.url().includes('/render?'));
      return (
        await Promise.all(
          frames.map((f) =>
            f
              .locator('body')
              .innerText()
              .catch(() => ''),
          ),
        )
      ).join('\n');
    };
    await expect.poll(metadataText, { timeout: 20_000 }).toContain(`${request.job_id}: ${request.goal}`);
    // Current details come from the worker through a metadata query; "R" asks the page again.
    await expect
      .poll(
        async () => {
          await page.keyboard.press('r');
          return metadataText();
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toContain('Waiting for a human');
    expect(await metadataText()).toMatch(/draft\s+rejected_budget/);
    // Which handover each hop's stage got (the reference pipeline's edges have none) and the log's URI.
    expect(await metadataText()).toMatch(/intake\s+package only\s+[0-9a-f]{12}…/);
    await screenshot(page, '2-summary-and-details');

    // 3. The `package` query, run from the UI.
    await expectPackageQuery(page, request.job_id);
    await screenshot(page, '3-package-query');

    // 4. `decide` from the UI: the validator's refusal is shown, then a valid top-up is taken.
    const dialog = updateDialog(page);
    const sendDecision = (decision: object) => sendUpdate(page, 'decide', decision);
    await sendDecision({ action: 'top_up', actor: 'ops.lead' });
    await expect
      .poll(() => dialog.getByRole('alert').innerText(), { timeout: 20_000 })
      .toContain('top_up needs usd > 0 or revisions > 0');
    await screenshot(page, '4-decide-refused');
    await dialog.getByRole('button', { name: 'Cancel' }).last().click();
    await sendDecision({ action: 'top_up', actor: 'ops.lead', usd: 1, note: 'approved from the Web UI' });
    await expect.poll(() => dialog.isVisible(), { timeout: 20_000 }).toBe(false);

    // 5. The job completes: in the result, and on the page.
    const result = await jobResult(rail.client, request.job_id);
    expect(result.status).toBe('completed');
    expect(result.acks.find((a) => a.stage === 'human' && a.actor === 'ops.lead')?.reason).toBe(
      'decided top_up (+$1, +0 revisions) by ops.lead: approved from the Web UI',
    );
    await page.goto(`${ui}/workflows/${encodeURIComponent(request.job_id)}`);
    await expect.poll(() => page.locator('main').innerText(), { timeout: 20_000 }).toContain('"status": "completed"');
    expect(await page.locator('main').innerText()).toContain('Completed');
    await screenshot(page, '5-completed');
    await page.close();
  });

  it('with payload encryption, shows the input, summary and package query decoded through the codec server, and its decide reaches the worker', async (ctx) => {
    if (unavailable || !browser) return ctx.skip(`chromium unavailable: ${unavailable}`);
    // A dev server of its own: --ui-codec-endpoint makes the Web UI also *encode* what it sends
    // (signals, updates) through the codec server, which the suite's plain workers cannot read.
    const keys = parseCodecKeys(
      JSON.stringify({ keys: [{ id: 'web-ui', key: crypto.randomBytes(32).toString('base64') }] }),
      'the test',
    );
    const [port, uiPort, codecPort] = [await freePort(), await freePort(), await freePort()];
    const codec = buildCodecServer({ keys, origins: codecOrigins({ webUiUrl: `http://localhost:${uiPort}` }, {}) });
    const request = jobRequest({ budget: { usd: 0.005, revisions: 1 } });
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-web-ui-codec-'));
    let server: DevServer | undefined;
    let encrypted: Rail | undefined;
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      const logFile = path.join(tmp, 'temporal-server.log');
      server = await ensureDevServer({
        port,
        uiPort,
        logFile,
        codecEndpoint: await codec.listen({ host: '127.0.0.1', port: codecPort }),
        log: () => undefined,
      });
      const { client, taskQueue } = (encrypted = await startRail({
        address: server.address,
        dataConverter: handrailDataConverter(keys),
      }));
      await startJob(client, request, { taskQueue });
      await waitFor('escalation', async () =>
        (await getJob(client, request.job_id)).status.status === 'escalated' ? true : undefined,
      );
      await page.goto(
        `${server.webUiUrl}/namespaces/${inject('namespace')}/workflows/${encodeURIComponent(request.job_id)}`,
      );
      // The input is the job request: the ticket's subject, decoded, on the page.
      await expect.poll(() => page.locator('main').innerText(), { timeout: 30_000 }).toContain(request.ticket.subject);
      await page.getByTestId('user-metadata-tab').click();
      const frames = () =>
        Promise.all(
          page
            .frames()
            .filter((f) => f.url().includes('/render?'))
            .map((f) =>
              f
                .locator('body')
                .innerText()
                .catch(() => ''),
            ),
        );
      await expect
        .poll(async () => (await frames()).join('\n'), { timeout: 20_000 })
        .toContain(`${request.job_id}: ${request.goal}`);
      await expectPackageQuery(page, request.job_id);
      // What the UI sends goes through the codec server's /encode: the keyed worker reads the decision.
      await sendUpdate(page, 'decide', { action: 'top_up', actor: 'ops.lead', usd: 1, note: 'sent encrypted' });
      await expect.poll(() => updateDialog(page).isVisible(), { timeout: 20_000 }).toBe(false);
      const result = await jobResult(client, request.job_id);
      expect(result.acks.find((a) => a.stage === 'human' && a.actor === 'ops.lead')?.reason).toBe(
        'decided top_up (+$1, +0 revisions) by ops.lead: sent encrypted',
      );
    } finally {
      await page.close();
      await encrypted?.stop();
      // Its history goes with it (in memory): no job is left waiting.
      await server?.stop();
      await codec.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
