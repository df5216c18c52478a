/**
 * Handoff schema versions: which exist, which are retired, and how to upgrade an older package
 * for a consumer that only accepts a newer one (compatibility rules: contracts/README.md).
 */
import { handoffV1 as validateV1, handoffV2 as validateV2, type StandaloneValidator } from './generated/validators';
import { HANDOFF_V1, HANDOFF_V2, isSlug } from './names';

export type PackageObject = Record<string, unknown>;

export interface HandoffVersion {
  /** The package's `schema` value, e.g. `handoff.v1`. */
  schema: string;
  /** A retired version is rejected everywhere; it stays listed so the rejection can say so. */
  status: 'active' | 'retired';
  validate: StandaloneValidator;
}

/** Turns a valid package of `from` into a package of `to`; pure, so workflows can run it. */
export interface Upgrader {
  from: string;
  to: string;
  upgrade(pkg: PackageObject): PackageObject;
}

export class VersionRegistry {
  private readonly versions = new Map<string, HandoffVersion>();
  private readonly upgraders = new Map<string, Upgrader[]>();

  register(version: HandoffVersion): this {
    this.versions.set(version.schema, version);
    return this;
  }

  addUpgrader(upgrader: Upgrader): this {
    if (!this.versions.has(upgrader.from) || !this.versions.has(upgrader.to)) {
      throw new Error(`upgrader ${upgrader.from} -> ${upgrader.to}: register both versions first`);
    }
    this.upgraders.set(upgrader.from, [...(this.upgraders.get(upgrader.from) ?? []), upgrader]);
    return this;
  }

  get(schema: string): HandoffVersion | undefined {
    return this.versions.get(schema);
  }

  /** Shortest chain of upgraders from `from` to an active accepted version, or null. */
  upgradePath(from: string, accept: readonly string[]): { steps: Upgrader[]; target: HandoffVersion } | null {
    const queue: { at: string; path: Upgrader[] }[] = [{ at: from, path: [] }];
    const visited = new Set([from]);
    for (let next = queue.shift(); next; next = queue.shift()) {
      for (const step of this.upgraders.get(next.at) ?? []) {
        const target = this.versions.get(step.to);
        if (visited.has(step.to) || target?.status !== 'active') continue;
        const path = [...next.path, step];
        if (accept.includes(step.to)) return { steps: path, target };
        visited.add(step.to);
        queue.push({ at: step.to, path });
      }
    }
    return null;
  }
}

/** A fresh registry holding the versions this build knows. Extend it (e.g. in tests or when
 * rolling out handoff.v2) without touching the one validateHandoff uses by default. */
export function createHandoffRegistry(): VersionRegistry {
  return new VersionRegistry().register({ schema: HANDOFF_V1, status: 'active', validate: validateV1 });
}

/** handoff.v2 (v1 plus `pipeline`). Not in createHandoffRegistry: a pipeline whose stages read it
 * declares it, with upgradeV1ToV2, in definePipeline's `versions`. */
export const handoffV2Version: HandoffVersion = { schema: HANDOFF_V2, status: 'active', validate: validateV2 };

/**
 * v1 → v2 for the pipeline named `pipelineName`. A v1 package may already carry an unknown
 * `pipeline` field (v1 passes unknown fields through); nothing ever gave it v2's meaning, so the
 * upgrade refuses it rather than reinterpret it, and validateHandoff rejects the package (`version`).
 */
export function upgradeV1ToV2(pipelineName: string): Upgrader {
  if (!isSlug(pipelineName))
    throw new Error(`upgradeV1ToV2: pipeline name ${JSON.stringify(pipelineName)} is not a slug`);
  return {
    from: HANDOFF_V1,
    to: HANDOFF_V2,
    upgrade(pkg) {
      if (Object.prototype.hasOwnProperty.call(pkg, 'pipeline'))
        throw new Error(`${HANDOFF_V1} package already carries an unknown field "pipeline"`);
      return { ...pkg, schema: HANDOFF_V2, pipeline: pipelineName };
    },
  };
}
