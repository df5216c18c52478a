/**
 * W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header).
 *
 * The patterns avoid lookaheads so any JSON Schema validator (including RE2-based ones) can run
 * them: shape is one pattern, "neither id all zeros" is a second pattern used under `not`.
 */

/** version-traceid-parentid-flags, lowercase hex. Version ff is invalid; version 00 has exactly
 * four fields; a future version may append `-...` fields, which a parser must tolerate. */
export const TRACEPARENT_PATTERN =
  '^(?:00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}|(?:0[1-9a-f]|[1-9a-e][0-9a-f]|f[0-9a-e])-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(?:-.*)?)$';

/** An all-zero trace id or parent id is invalid per the spec. */
export const TRACEPARENT_ZERO_ID_PATTERN = '^[0-9a-f]{2}-(?:0{32}-|[0-9a-f]{32}-0{16}-)';

const shape = new RegExp(TRACEPARENT_PATTERN);
const zeroId = new RegExp(TRACEPARENT_ZERO_ID_PATTERN);

export interface Traceparent {
  version: string;
  traceId: string;
  parentId: string;
  flags: string;
  sampled: boolean;
}

export function isValidTraceparent(value: string): boolean {
  return shape.test(value) && !zeroId.test(value);
}

export function parseTraceparent(value: string): Traceparent | null {
  if (!isValidTraceparent(value)) return null;
  const [version = '', traceId = '', parentId = '', flags = ''] = value.split('-');
  return { version, traceId, parentId, flags, sampled: (parseInt(flags, 16) & 1) === 1 };
}
