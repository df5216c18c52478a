import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  HANDOFF_V1,
  HANDOFF_V2,
  createHandoffRegistry,
  handoffV1,
  handoffV2,
  handoffV2Fields,
  handoffV2Version,
  nextVersion,
  toContractErrors,
  upgradeV1ToV2,
  validateHandoff,
  validators,
} from '../../../contracts';
import { committedSchemaValidator, fixture, manifest } from './helpers';

const PIPELINE = 'ticket-triage';
const v1 = fixture('valid.json') as Record<string, unknown>;
const asV2 = (pkg: unknown): Record<string, unknown> => ({
  ...(pkg as object),
  schema: HANDOFF_V2,
  pipeline: PIPELINE,
});
const registry = () => createHandoffRegistry().register(handoffV2Version).addUpgrader(upgradeV1ToV2(PIPELINE));

describe('handoff.v2 schema', () => {
  it('accepts a v1 package plus pipeline', () => {
    expect(validateHandoff(asV2(v1), { accept: [HANDOFF_V2], registry: registry() })).toEqual({
      ok: true,
      value: asV2(v1),
    });
  });

  it('refuses a v2 package without pipeline, naming /pipeline', () => {
    const { pipeline: _dropped, ...noPipeline } = asV2(v1);
    expect(validateHandoff(noPipeline, { accept: [HANDOFF_V2], registry: registry() })).toEqual({
      ok: false,
      reason: 'schema',
      errors: [{ path: '/pipeline', message: 'is required' }],
    });
  });

  it('stays out of the default registry: a consumer passing no registry does not know v2', () => {
    expect(validateHandoff(asV2(v1), { accept: [HANDOFF_V1, HANDOFF_V2] })).toEqual({
      ok: false,
      reason: 'version',
      errors: [{ path: '/schema', message: 'unknown version "handoff.v2"' }],
    });
  });
});

describe('nextVersion: a new version only adds fields', () => {
  it.each(['goal', 'budget', 'schema'])('throws when a new field re-declares v1 field %s', (name) => {
    expect(() => nextVersion(handoffV1, 'handoff.v9', { [name]: z.string() })).toThrow(
      `handoff.v9 re-declares ${name}`,
    );
  });

  it('takes a field named like an Object.prototype member: only the base shape counts', () => {
    expect(Object.keys(nextVersion(handoffV1, 'handoff.v9', { constructor: z.string() }).shape)).toContain(
      'constructor',
    );
  });

  it('keeps every v1 field as v1 defined it; every other v2 field is listed as new', () => {
    const added = Object.keys(handoffV2.shape).filter((name) => !(name in handoffV1.shape));
    expect(added).toEqual(Object.keys(handoffV2Fields));
    for (const [name, field] of Object.entries(handoffV1.shape)) {
      if (name !== 'schema') expect(handoffV2.shape[name as keyof typeof handoffV2.shape], name).toBe(field);
    }
  });
});

describe('handoff.v2: zod, the generated validator and the committed JSON Schema agree', () => {
  const jsonSchema = committedSchemaValidator('contracts/schema/handoff.v2.json');
  const refusals = (pkg: unknown) => {
    const zod = handoffV2.safeParse(pkg).error?.issues.map((i) => `/${i.path.join('/')}`) ?? [];
    const ajv = validators.handoffV2(pkg) ? [] : toContractErrors(validators.handoffV2.errors).map((e) => e.path);
    return { zod: [...new Set(zod)].sort(), ajv: [...new Set(ajv)].sort(), jsonSchema: jsonSchema(pkg) };
  };

  // Every v1 fixture lifted to v2 must get the same verdict from all three.
  it.each(manifest.packages)('$file as v2', ({ file }) => {
    const r = refusals(asV2(fixture(file)));
    expect(r.ajv).toEqual(r.zod);
    expect(r.jsonSchema).toBe(r.zod.length === 0);
  });

  it.each([
    ['pipeline not a slug', { pipeline: 'Ticket Triage' }, '/pipeline'],
    ['pipeline not a string', { pipeline: 7 }, '/pipeline'],
    ['schema still v1', { schema: HANDOFF_V1 }, '/schema'],
  ])('%s: refused at %s by all three', (_name, patch, path) => {
    expect(refusals({ ...asV2(v1), ...patch })).toEqual({ zod: [path], ajv: [path], jsonSchema: false });
  });
});

describe('upgradeV1ToV2', () => {
  it('sets schema and pipeline, keeping every other field (unknown ones included)', () => {
    const pkg = fixture('unknown-fields.json');
    expect(validateHandoff(pkg, { accept: [HANDOFF_V2], registry: registry() })).toEqual({
      ok: true,
      value: asV2(pkg),
    });
  });

  it('refuses a v1 package that already carries a foreign pipeline field, never reinterpreting it', () => {
    const foreign = { ...v1, pipeline: 'billing' };
    expect(handoffV1.safeParse(foreign).success).toBe(true);
    expect(() => upgradeV1ToV2(PIPELINE).upgrade(foreign)).toThrow(/already carries an unknown field "pipeline"/);
    expect(validateHandoff(foreign, { accept: [HANDOFF_V2], registry: registry() })).toEqual({
      ok: false,
      reason: 'version',
      errors: [{ path: '/schema', message: 'upgrade handoff.v1 -> handoff.v2 failed' }],
    });
  });

  it('refuses a pipeline name that is not a slug when it is made, not per package', () => {
    expect(() => upgradeV1ToV2('Ticket Triage')).toThrow(/not a slug/);
  });
});
