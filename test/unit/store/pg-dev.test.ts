/**
 * `npm run pg:dev` as a user runs it: the cluster stays up until a signal, then is removed.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { codeRoot } from '../../../src/config';
import { postgresUnavailable } from '../../helpers/store-backends';

const skip = postgresUnavailable();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(skip !== null)(`npm run pg:dev${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('keeps the cluster running until SIGTERM, then stops and removes it', async () => {
    const child = spawn(path.join(codeRoot, 'node_modules', '.bin', 'tsx'), ['src/devtools/pg-dev.ts'], {
      cwd: codeRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const found = /^DATABASE_URL=(\S+)$/m.exec(output);
          if (found) resolve(found[1]!);
        });
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        void exited.then((code) => reject(new Error(`pg:dev exited ${code} before printing its URL:\n${output}`)));
      });

      await sleep(4_000);
      expect(child.exitCode, output).toBeNull();
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      // The cluster's socket lives in its temp root: where to look for leftovers afterwards.
      const root = (await db.query<{ unix_socket_directories: string }>('SHOW unix_socket_directories')).rows[0]!
        .unix_socket_directories;
      await db.end();
      expect(fs.existsSync(root)).toBe(true);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(fs.existsSync(root)).toBe(false);
      const after = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
      // Nothing listens on its port any more (not a server still shutting down, which refuses too).
      await expect(after.connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);
});
