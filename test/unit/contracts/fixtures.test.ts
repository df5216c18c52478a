import { describe, expect, it } from 'vitest';
import { HANDOFF_V1, handoffV1, validateHandoff } from '../../../contracts';
import { ticketArtifactBodies, type TicketArtifactType } from '../../../contracts/pipelines/ticket-artifacts';
import { seed001Example } from '../../../scripts/contracts/fixtures';
import { committedSchemaValidator, fixture, manifest, readJson } from './helpers';

const accept = [HANDOFF_V1];

describe('contract fixtures', () => {
  const jsonSchema = committedSchemaValidator(manifest.schema);

  it('stores the reference example package exactly as written', () => {
    expect(fixture('seed-001-example.json')).toEqual(seed001Example);
    expect(Object.keys(fixture('seed-001-example.json') as object)).toEqual(Object.keys(seed001Example));
  });

  it.each(manifest.packages)('$file: validateHandoff says $expect $reason $path', (c) => {
    const result = validateHandoff(fixture(c.file), { accept });
    if (c.expect === 'accept') {
      expect(result).toEqual({ ok: true, value: fixture(c.file) });
    } else {
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.reason).toBe(c.reason);
      expect(result.errors[0]?.path).toBe(c.path);
    }
  });

  it.each(manifest.packages)('$file: the committed JSON Schema says $json_schema', (c) => {
    expect(jsonSchema(fixture(c.file))).toBe(c.json_schema === 'accept');
  });

  it.each(manifest.packages)('$file: the zod source agrees with the JSON Schema', (c) => {
    expect(handoffV1.safeParse(fixture(c.file)).success).toBe(c.json_schema === 'accept');
  });

  it.each(manifest.artifacts)('$file is valid against $schema and its zod schema', ({ file, schema }) => {
    const type = file.replace(/^artifact-/, '').replace(/\.json$/, '') as TicketArtifactType;
    expect(committedSchemaValidator(schema)(fixture(file))).toBe(true);
    expect(ticketArtifactBodies[type].safeParse(fixture(file)).success).toBe(true);
  });

  it('passes unknown fields through untouched (v1 readers ignore, never drop, them)', () => {
    const result = validateHandoff(fixture('unknown-fields.json'), { accept });
    expect(result.ok && (result.value as Record<string, unknown>).x_priority).toBe('p1');
    expect(handoffV1.parse(readJson('contracts/fixtures/unknown-fields.json'))).toMatchObject({
      x_priority: 'p1',
      budget: { x_currency: 'USD' },
    });
  });
});
