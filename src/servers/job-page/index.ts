/**
 * `GET /jobs/{id}` on the records API server: a page that follows one job live (its hops, acks
 * and reasons, its wallet, the working model stage's text) and, while the job waits on a human,
 * shows the escalation with a form that decides it through the records API. The page is static
 * and public: it holds no job data. It asks for the API token (kept in the tab's sessionStorage)
 * and sends it as a bearer header on the stream and the API calls, which keep their own auth and
 * owner scope. Its Content-Security-Policy allows its own script and stylesheet (by hash) and
 * requests to this server only.
 */
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { JOB_PAGE_SCRIPT, JOB_PAGE_STYLE, jobPageHtml } from './html';

/** The page's route (Fastify syntax) and the routes the API's auth hook lets through without a
 * token: the page only (`HEAD` is the `GET` Fastify adds), never its `/events`. */
export const JOB_PAGE_URL = '/jobs/:id';
export const JOB_PAGE_PUBLIC_ROUTES: readonly string[] = [`GET ${JOB_PAGE_URL}`, `HEAD ${JOB_PAGE_URL}`];

export interface JobPageOptions {
  /** What the server serves, workspace → projects: where the page looks for the job's record. */
  workspaces: Record<string, readonly string[]>;
}

const sha256 = (text: string) => `'sha256-${crypto.createHash('sha256').update(text).digest('base64')}'`;

export const JOB_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(JOB_PAGE_SCRIPT)}`,
  `style-src ${sha256(JOB_PAGE_STYLE)}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function registerJobPage(app: FastifyInstance, options: JobPageOptions): void {
  const html = jobPageHtml(options.workspaces);
  app.get(JOB_PAGE_URL, async (_request, reply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', JOB_PAGE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .send(html),
  );
}
