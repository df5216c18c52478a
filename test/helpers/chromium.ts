/** Debian's chromium for tests that look at a page in a real headless browser (driven by playwright-core). */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

/** Installs Debian's chromium when missing (CI runs as root on a fresh machine); the reason when it cannot. */
export function ensureChromium(): string | undefined {
  if (fs.existsSync(CHROMIUM)) return undefined;
  if (process.getuid?.() !== 0)
    return `${CHROMIUM} is missing and installing it needs root (apt-get install -y chromium)`;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', 'chromium'],
  ]) {
    const run = spawnSync('apt-get', args, { env, encoding: 'utf8', timeout: 15 * 60_000 });
    if (run.status !== 0)
      return `apt-get ${args.join(' ')} failed: ${(run.stderr || run.error?.message || '').trim().split('\n').pop()}`;
  }
  return fs.existsSync(CHROMIUM) ? undefined : `apt-get installed chromium but ${CHROMIUM} is still missing`;
}
