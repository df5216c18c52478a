/**
 * The Temporal server's config for the cluster, derived from the server module's own
 * `config/development-postgres12.yaml` (and its dynamic config) by text edits rather than
 * written from scratch, so a version bump keeps upstream's defaults. Each edit must match
 * where expected: a template that changed shape fails loudly instead of starting a server on
 * the dev server's ports.
 */

export interface ServerConfigOptions {
  /** Added to every port the template listens on (services, membership, pprof, metrics). */
  portOffset: number;
  postgresAddress: string;
  postgresUser: string;
  /** Absolute path of the dynamic config file (the template's is relative to the cwd). */
  dynamicConfigFile: string;
  logLevel: string;
}

/** Replaces every match of `pattern` (global), requiring at least `min` of them. */
function edit(text: string, what: string, pattern: RegExp, replace: (...groups: string[]) => string, min = 1): string {
  let count = 0;
  const out = text.replace(pattern, (...args: unknown[]) => {
    count++;
    return replace(...(args.slice(0, -2) as string[]));
  });
  if (count < min) throw new Error(`server config template changed: expected ${min}+ ${what}, found ${count}`);
  return out;
}

const shift = (port: string, offset: number): string => String(Number(port) + offset);

/** Service gRPC/membership/HTTP ports (4 services) and pprof's `port:`. */
const SERVICE_PORTS = /^(\s*(?:grpcPort|membershipPort|httpPort|port):\s*)(\d+)\s*$/gm;
/** The metrics listener and the cluster's own frontend address ("localhost:7233" in the template). */
const LISTEN_ADDRESSES = /^(\s*(?:listenAddress|rpcAddress):\s*)"(?:localhost|127\.0\.0\.1):(\d+)"/gm;

/** Every port a server config listens on (the ones serverConfigYaml moves), once each. */
export function listenPorts(config: string): number[] {
  const ports = [...config.matchAll(SERVICE_PORTS), ...config.matchAll(LISTEN_ADDRESSES)].map((m) => Number(m[2]));
  return [...new Set(ports)];
}

export function serverConfigYaml(template: string, opts: ServerConfigOptions): string {
  let out = template;
  out = edit(out, 'service ports', SERVICE_PORTS, (_, key, port) => `${key}${shift(port!, opts.portOffset)}`, 9);
  out = edit(
    out,
    'listen/rpc addresses',
    LISTEN_ADDRESSES,
    (_, key, port) => `${key}"127.0.0.1:${shift(port!, opts.portOffset)}"`,
    2,
  );
  out = edit(out, 'connectAddr', /^(\s*connectAddr:\s*)"[^"]*"/gm, (_, key) => `${key}"${opts.postgresAddress}"`, 2);
  out = edit(out, 'sql users', /^(\s*user:\s*)"[^"]*"/gm, (_, key) => `${key}"${opts.postgresUser}"`, 2);
  out = edit(
    out,
    'dynamic config filepath',
    /^(\s*filepath:\s*)"[^"]*"/gm,
    (_, key) => `${key}"${opts.dynamicConfigFile}"`,
  );
  out = edit(out, 'log level', /^(log:\n(?:\s+.*\n)*?\s+level:\s*)\S+/m, (_, head) => `${head}${opts.logLevel}`);
  return out;
}

/** The dynamic config only names the frontend's HTTP port (Nexus callbacks): shift it too. */
export function dynamicConfigYaml(template: string, portOffset: number): string {
  return edit(
    template,
    'localhost URLs',
    /\/\/localhost:(\d+)/g,
    (_, port) => `//127.0.0.1:${shift(port!, portOffset)}`,
  );
}

/** The standalone Web UI's config (ui-server reads `<root>/config/<env>.yaml`). */
export function uiServerConfigYaml(opts: {
  temporalAddress: string;
  host: string;
  port: number;
  namespace: string;
}): string {
  const origin = `http://${opts.host}:${opts.port}`;
  return [
    `temporalGrpcAddress: ${opts.temporalAddress}`,
    `host: ${opts.host}`,
    `port: ${opts.port}`,
    'enableUi: true',
    `defaultNamespace: ${opts.namespace}`,
    'cors:',
    '  allowOrigins:',
    `    - ${origin}`,
    `    - http://localhost:${opts.port}`,
    '',
  ].join('\n');
}
