/**
 * Connection settings come from Temporal's environment configuration as well as handrail's own
 * variables: a `temporal.toml` profile (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE), overridden by
 * TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / TEMPORAL_API_KEY, as the `temporal` CLI reads them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-envconfig-'));
const file = path.join(dir, 'temporal.toml');
fs.writeFileSync(
  file,
  [
    '[profile.default]',
    'address = "prod.example:7233"',
    'namespace = "payments"',
    'api_key = "key-1"',
    '',
    '[profile.staging]',
    'address = "staging.example:7233"',
    'namespace = "staging"',
    '',
  ].join('\n'),
);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('loadConfig and Temporal environment configuration', () => {
  it('defaults to a local dev server with nothing configured', () => {
    expect(loadConfig({ TEMPORAL_CONFIG_FILE: path.join(dir, 'absent.toml') })).toMatchObject({
      temporalAddress: 'localhost:7233',
      namespace: 'default',
      connection: {},
    });
  });

  it("takes the address, namespace and API key (with TLS, as Temporal does) from the profile's file", () => {
    expect(loadConfig({ TEMPORAL_CONFIG_FILE: file })).toMatchObject({
      temporalAddress: 'prod.example:7233',
      namespace: 'payments',
      connection: { apiKey: 'key-1', tls: true },
    });
  });

  it('reads the profile TEMPORAL_PROFILE names', () => {
    expect(loadConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging' })).toMatchObject({
      temporalAddress: 'staging.example:7233',
      namespace: 'staging',
    });
  });

  it('lets TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE override the file', () => {
    expect(
      loadConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_ADDRESS: '127.0.0.1:7333', TEMPORAL_NAMESPACE: 'ns' }),
    ).toMatchObject({ temporalAddress: '127.0.0.1:7333', namespace: 'ns' });
  });
});
