import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  dynamicConfigYaml,
  listenPorts,
  serverConfigYaml,
  uiServerConfigYaml,
} from '../../../src/devtools/cluster/server-config';

// Copies of go.temporal.io/server@v1.29.1's config/development-postgres12.yaml and
// config/dynamicconfig/development-sql.yaml, the templates `npm run cluster` edits.
const fixture = (name: string) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');
const template = fixture('development-postgres12.yaml');
const opts = {
  portOffset: 100,
  postgresAddress: '127.0.0.1:5433',
  postgresUser: 'temporal',
  dynamicConfigFile: '/data/cluster/config/dynamicconfig/development-sql.yaml',
  logLevel: 'warn',
};

/** Every number the config binds or dials: service ports and host:port addresses. */
function ports(yaml: string): number[] {
  const keyed = [...yaml.matchAll(/^\s*(?:grpcPort|membershipPort|httpPort|port):\s*(\d+)\s*$/gm)].map((m) =>
    Number(m[1]),
  );
  const addresses = [...yaml.matchAll(/"(?:localhost|127\.0\.0\.1):(\d+)"/g)].map((m) => Number(m[1]));
  return [...keyed, ...addresses];
}

describe('the cluster server config', () => {
  const config = serverConfigYaml(template, opts);

  it('moves every server port by the offset, off the dev server ports', () => {
    const dialled = new Set(['127.0.0.1:5433']);
    const before = ports(template).filter((p) => p !== 5432);
    const after = ports(config).filter((p) => !dialled.has(`127.0.0.1:${p}`));
    expect(after.sort((a, b) => a - b)).toEqual(before.map((p) => p + 100).sort((a, b) => a - b));
    expect(after).toEqual(expect.arrayContaining([7333, 7334, 7335, 7339, 7033, 7034, 7035, 7039, 7343, 8036, 8100]));
    expect(after.filter((p) => before.includes(p))).toEqual([]);
  });

  it('lists the ports a config listens on (what a second cluster must find free), moved with it', () => {
    const listened = [6933, 6934, 6935, 6939, 7233, 7234, 7235, 7239, 7243, 7936, 8000];
    expect(listenPorts(template).sort((a, b) => a - b)).toEqual(listened);
    expect(listenPorts(config).sort((a, b) => a - b)).toEqual(listened.map((p) => p + 100));
  });

  it('points both datastores at the cluster PostgreSQL with its user', () => {
    expect(config.match(/connectAddr: "127\.0\.0\.1:5433"/g)).toHaveLength(2);
    expect(config.match(/user: "temporal"/g)).toHaveLength(2);
    expect(config).not.toContain('5432');
  });

  it('names the frontend by loopback address, the dynamic config by absolute path, and lowers the log level', () => {
    expect(config).toContain('rpcAddress: "127.0.0.1:7333"');
    expect(config).not.toContain('localhost');
    expect(config).toContain(`filepath: "${opts.dynamicConfigFile}"`);
    expect(config).toMatch(/^log:\n\s+stdout: true\n\s+level: warn$/m);
  });

  it('fails loudly when the template no longer has what it edits', () => {
    expect(() => serverConfigYaml(template.replace(/connectAddr/g, 'address'), opts)).toThrow(
      /template changed: expected 2\+ connectAddr, found 0/,
    );
  });

  it('shifts the Nexus callback port in the dynamic config', () => {
    const dynamic = dynamicConfigYaml(fixture('development-sql.yaml'), 100);
    expect(dynamic).toContain('http://127.0.0.1:7343/namespaces/{{.NamespaceName}}/nexus/callback');
    expect(dynamic).not.toContain('7243');
  });
});

describe('the Web UI config', () => {
  it('serves on loopback against the cluster frontend, with its own origin allowed', () => {
    const yaml = uiServerConfigYaml({
      temporalAddress: '127.0.0.1:7333',
      host: '127.0.0.1',
      port: 8333,
      namespace: 'default',
    });
    expect(yaml).toContain(
      'temporalGrpcAddress: 127.0.0.1:7333\nhost: 127.0.0.1\nport: 8333\nenableUi: true\ndefaultNamespace: default\n',
    );
    expect(yaml).toContain('    - http://127.0.0.1:8333\n');
  });
});
