import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  HANDOFF_V1,
  createHandoffRegistry,
  handoffV1,
  validateHandoff,
  validators,
  type StandaloneValidator,
} from '../../../contracts';
import { createAjv } from '../../../scripts/contracts/build';
import { fixture } from './helpers';

// A synthetic next version: `priority` becomes required, a breaking change (contracts/README.md, compatibility rules)
// and so needs handoff.v2 plus an upgrader for packages still in flight as v1.
const HANDOFF_V2 = 'handoff.v2';
const handoffV2 = handoffV1.extend({ schema: z.literal(HANDOFF_V2), priority: z.enum(['low', 'normal', 'high']) });
const validateV2 = createAjv({ standalone: false }).compile(z.toJSONSchema(handoffV2, { target: 'draft-2020-12' }));

function registryWithV2() {
  return createHandoffRegistry()
    .register({ schema: HANDOFF_V2, status: 'active', validate: validateV2 as StandaloneValidator })
    .addUpgrader({
      from: HANDOFF_V1,
      to: HANDOFF_V2,
      upgrade: (pkg) => ({ ...pkg, schema: HANDOFF_V2, priority: 'normal' }),
    });
}

describe('handoff version registry', () => {
  const v1 = fixture('valid.json') as Record<string, unknown>;
  const v2 = fixture('next-version.json');

  it('rejects the next version as unknown for a consumer built before it existed', () => {
    expect(validateHandoff(v2, { accept: [HANDOFF_V1] })).toEqual({
      ok: false,
      reason: 'version',
      errors: [{ path: '/schema', message: 'unknown version "handoff.v2"' }],
    });
  });

  it('accepts the next version natively once registered and accepted', () => {
    expect(validateHandoff(v2, { accept: [HANDOFF_V2], registry: registryWithV2() })).toEqual({ ok: true, value: v2 });
  });

  it('upgrades a v1 package for a consumer that only accepts v2', () => {
    const result = validateHandoff(v1, { accept: [HANDOFF_V2], registry: registryWithV2() });
    expect(result).toEqual({ ok: true, value: { ...v1, schema: HANDOFF_V2, priority: 'normal' } });
  });

  it('never downgrades: a v1-only consumer rejects v2 even when both are registered', () => {
    const result = validateHandoff(v2, { accept: [HANDOFF_V1], registry: registryWithV2() });
    expect(result).toMatchObject({ ok: false, reason: 'version' });
    expect(result.ok ? '' : result.errors[0]?.message).toBe('version "handoff.v2" not accepted (accepts handoff.v1)');
  });

  it('validates a package against its own version before upgrading it', () => {
    const { job_id: _dropped, ...noJobId } = v1;
    const result = validateHandoff(noJobId, { accept: [HANDOFF_V2], registry: registryWithV2() });
    expect(result).toEqual({ ok: false, reason: 'schema', errors: [{ path: '/job_id', message: 'is required' }] });
  });

  it('rejects what an upgrader produces when it does not meet the target version', () => {
    const registry = createHandoffRegistry()
      .register({ schema: HANDOFF_V2, status: 'active', validate: validateV2 as StandaloneValidator })
      .addUpgrader({ from: HANDOFF_V1, to: HANDOFF_V2, upgrade: (pkg) => ({ ...pkg, schema: HANDOFF_V2 }) });
    const result = validateHandoff(v1, { accept: [HANDOFF_V2], registry });
    expect(result).toEqual({ ok: false, reason: 'schema', errors: [{ path: '/priority', message: 'is required' }] });
  });

  it('reports a throwing upgrader as a version rejection instead of throwing', () => {
    const registry = createHandoffRegistry()
      .register({ schema: HANDOFF_V2, status: 'active', validate: validateV2 as StandaloneValidator })
      .addUpgrader({
        from: HANDOFF_V1,
        to: HANDOFF_V2,
        upgrade: () => {
          throw new Error('boom');
        },
      });
    expect(validateHandoff(v1, { accept: [HANDOFF_V2], registry })).toEqual({
      ok: false,
      reason: 'version',
      errors: [{ path: '/schema', message: 'upgrade handoff.v1 -> handoff.v2 failed' }],
    });
  });

  it('rejects a retired version with that reason, even where an upgrader exists', () => {
    const registry = createHandoffRegistry()
      .register({ schema: HANDOFF_V1, status: 'retired', validate: validators.handoffV1 })
      .register({ schema: HANDOFF_V2, status: 'active', validate: validateV2 as StandaloneValidator })
      .addUpgrader({
        from: HANDOFF_V1,
        to: HANDOFF_V2,
        upgrade: (pkg) => ({ ...pkg, schema: HANDOFF_V2, priority: 'normal' }),
      });
    expect(validateHandoff(v1, { accept: [HANDOFF_V2], registry })).toEqual({
      ok: false,
      reason: 'version',
      errors: [{ path: '/schema', message: 'retired version "handoff.v1"' }],
    });
  });

  it('refuses an upgrader between versions it does not know', () => {
    expect(() =>
      createHandoffRegistry().addUpgrader({ from: HANDOFF_V1, to: 'handoff.v9', upgrade: (pkg) => pkg }),
    ).toThrow(/register both versions first/);
  });

  it('keeps the default registry untouched by registries built elsewhere', () => {
    registryWithV2();
    expect(validateHandoff(v2, { accept: [HANDOFF_V1, HANDOFF_V2] })).toMatchObject({ ok: false, reason: 'version' });
  });
});
