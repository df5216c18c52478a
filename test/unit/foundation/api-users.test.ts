import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { apiUsers, loadApiUsers, sha256Token } from '../../../src/servers/api-users';

const config = {
  ana: { token_sha256: sha256Token('t-ana'), role: 'user' },
  ops: { token_sha256: sha256Token('t-ops'), role: 'root' },
};

/** The config check's refusal: a ZodError whose one issue is `issue` (what was wrong, and where). */
const refusal = (issue: Record<string, unknown>) =>
  expect.objectContaining({ name: ZodError.name, issues: [expect.objectContaining(issue)] });

describe('API users', () => {
  it('authenticates by token hash and knows its users', () => {
    const users = apiUsers(config);
    expect(users.authenticate('t-ana')).toEqual({ name: 'ana', role: 'user' });
    expect(users.authenticate('t-ops')).toEqual({ name: 'ops', role: 'root' });
    expect(users.authenticate('t-ana ')).toBeNull();
    expect(users.authenticate('')).toBeNull();
    expect(users.has('ana')).toBe(true);
    expect(users.has('toString')).toBe(false);
  });

  it('loads from HANDRAIL_API_USERS_JSON or the file in HANDRAIL_API_USERS, one of them', () => {
    expect(loadApiUsers({ HANDRAIL_API_USERS_JSON: JSON.stringify(config) }).authenticate('t-ana')?.name).toBe('ana');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'api-users-')), 'users.json');
    fs.writeFileSync(file, JSON.stringify(config));
    expect(loadApiUsers({ HANDRAIL_API_USERS: file }).authenticate('t-ops')?.role).toBe('root');
    expect(() => loadApiUsers({})).toThrow(/HANDRAIL_API_USERS/);
    expect(() => loadApiUsers({ HANDRAIL_API_USERS: file, HANDRAIL_API_USERS_JSON: '{}' })).toThrow(/not both/);
    expect(() => loadApiUsers({ HANDRAIL_API_USERS_JSON: '{' })).toThrow(/not readable JSON/);
  });

  it('refuses bad configs: plain tokens, unknown roles, odd names, shared hashes', () => {
    expect(() => apiUsers({ ana: { token_sha256: 't-ana', role: 'user' } })).toThrow(/64 lowercase hex/);
    expect(() => apiUsers({ ana: { token_sha256: sha256Token('x'), role: 'admin' } })).toThrow(
      refusal({ code: 'invalid_value', path: ['ana', 'role'] }),
    );
    expect(() => apiUsers({ 'ana smith': { token_sha256: sha256Token('x'), role: 'user' } })).toThrow(
      refusal({ code: 'invalid_key', path: ['ana smith'] }),
    );
    // The rail's own name: records it creates are the only ones that decide a job.
    expect(() => apiUsers({ rail: { token_sha256: sha256Token('x'), role: 'user' } })).toThrow(/the rail's name/);
    expect(() => apiUsers({ ana: { token_sha256: sha256Token('x'), role: 'user', token: 'x' } })).toThrow(
      refusal({ code: 'unrecognized_keys', path: ['ana'], keys: ['token'] }),
    );
    expect(() =>
      apiUsers({
        ana: { token_sha256: sha256Token('x'), role: 'user' },
        bob: { token_sha256: sha256Token('x'), role: 'user' },
      }),
    ).toThrow(/shares a token hash/);
  });
});
