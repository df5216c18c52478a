import { describe, expect, it } from 'vitest';
import { HANDOFF_V1, Trace, isValidTraceparent, parseTraceparent, validateHandoff } from '../../../contracts';
import { committedSchemaValidator, fixture } from './helpers';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

// W3C Trace Context, section "traceparent Header Field Values".
const cases: [string, string, boolean][] = [
  ['version 00, sampled', `00-${TRACE}-${PARENT}-01`, true],
  ['version 00, not sampled', `00-${TRACE}-${PARENT}-00`, true],
  ['future version with extra fields', `01-${TRACE}-${PARENT}-01-what-the-future-holds`, true],
  ['future version without extra fields', `cc-${TRACE}-${PARENT}-01`, true],
  ['version ff', `ff-${TRACE}-${PARENT}-01`, false],
  ['version 00 with extra fields', `00-${TRACE}-${PARENT}-01-extra`, false],
  ['future version, no dash before extra data', `01-${TRACE}-${PARENT}-01x`, false],
  ['all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`, false],
  ['all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`, false],
  ['uppercase hex', `00-${TRACE.toUpperCase()}-${PARENT}-01`, false],
  ['short trace id', `00-${TRACE.slice(1)}-${PARENT}-01`, false],
  ['long parent id', `00-${TRACE}-${PARENT}0-01`, false],
  ['one-digit flags', `00-${TRACE}-${PARENT}-1`, false],
  ['non-hex flags', `00-${TRACE}-${PARENT}-0g`, false],
  ['one-digit version', `0-${TRACE}-${PARENT}-01`, false],
  ['surrounding whitespace', ` 00-${TRACE}-${PARENT}-01`, false],
  ['empty', '', false],
];

describe('W3C traceparent', () => {
  const jsonSchema = committedSchemaValidator('contracts/schema/handoff.v1.json');
  const valid = fixture('valid.json') as Record<string, unknown>;

  it.each(cases)('%s: %s -> %s, in code, zod and the committed JSON Schema', (_name, value, ok) => {
    expect(isValidTraceparent(value)).toBe(ok);
    expect(Trace.safeParse({ traceparent: value }).success).toBe(ok);
    expect(jsonSchema({ ...valid, trace: { traceparent: value } })).toBe(ok);
    expect(validateHandoff({ ...valid, trace: { traceparent: value } }, { accept: [HANDOFF_V1] }).ok).toBe(ok);
  });

  it('parses the fields and the sampled flag', () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-03`)).toEqual({
      version: '00',
      traceId: TRACE,
      parentId: PARENT,
      flags: '03',
      sampled: true,
    });
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-02`)?.sampled).toBe(false);
    expect(parseTraceparent(`00-${'0'.repeat(32)}-${PARENT}-01`)).toBeNull();
  });

  it('checks the traceparent an ack carries too', () => {
    const ack = { ...(valid.ack as object), traceparent: `00-${TRACE}-${'0'.repeat(16)}-01` };
    expect(validateHandoff({ ...valid, ack }, { accept: [HANDOFF_V1] })).toEqual({
      ok: false,
      reason: 'schema',
      errors: [{ path: '/ack/traceparent', message: 'trace id and parent id must not be all zeros' }],
    });
  });
});
