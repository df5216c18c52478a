import { describe, expect, it } from 'vitest';
import { HANDOFF_V1, validateHandoff } from '../../../contracts';
import { REQUIRED_FIELDS } from '../../../scripts/contracts/fixtures';
import { fixture, manifest, propertyPaths, readJson, withoutPath } from './helpers';

// Contract chaos: drop each optional field, still valid; drop each required
// one, rejected naming it. Paths come from the committed JSON Schema, so a field added to the
// source is covered without editing this file.
const schema = readJson(manifest.schema) as Parameters<typeof propertyPaths>[0];
const valid = fixture('valid.json');
const { required, optional } = propertyPaths(schema, valid);
const accept = [HANDOFF_V1];

describe('handoff.v1 field by field', () => {
  it('exercises every top-level field and the nested ones', () => {
    expect(required).toEqual(expect.arrayContaining(REQUIRED_FIELDS.map((f) => `/${f}`)));
    expect(required).toEqual(
      expect.arrayContaining(['/evaluator/last_verdict', '/trace/traceparent', '/artifacts/0/uri']),
    );
    expect(optional).toEqual(
      expect.arrayContaining(['/next_hint', '/hop', '/summary', '/ack', '/artifacts/0/hash', '/trace/tracestate']),
    );
  });

  it.each(optional)('dropping optional %s keeps the package valid', (path) => {
    expect(validateHandoff(withoutPath(valid, path), { accept }).ok).toBe(true);
  });

  it.each(required)('dropping required %s rejects it as schema, naming the field', (path) => {
    const result = validateHandoff(withoutPath(valid, path), { accept });
    expect(result).toMatchObject({ ok: false, reason: 'schema' });
    expect(result.ok ? [] : result.errors).toContainEqual({ path, message: 'is required' });
  });

  it('accepts the initial evaluator state "none" and both verdicts', () => {
    for (const last_verdict of ['none', 'pass', 'fail']) {
      const pkg = { ...(valid as object), evaluator: { last_verdict, failures: [] } };
      expect(validateHandoff(pkg, { accept }).ok).toBe(true);
    }
  });

  it('rejects a wrong type with the field path and expected type', () => {
    const result = validateHandoff(
      { ...(valid as object), budget: { usd_remaining: '1.2', revisions_remaining: 2 } },
      { accept },
    );
    expect(result).toEqual({
      ok: false,
      reason: 'schema',
      errors: [{ path: '/budget/usd_remaining', message: 'must be number' }],
    });
  });

  it('rejects a negative budget and a fractional revision count', () => {
    const result = validateHandoff(
      { ...(valid as object), budget: { usd_remaining: -0.01, revisions_remaining: 1.5 } },
      { accept },
    );
    expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual([
      '/budget/usd_remaining',
      '/budget/revisions_remaining',
    ]);
  });
});
