/**
 * Gates on a comparison, pure: `METRIC[.STAT] OP BOUND`, e.g. `pass_rate>=-2pt` (the pass rate
 * drops by at most 2 points) or `cost_per_job<=+10%` (the cost per job rises by at most 10%).
 *
 * - METRIC: a scorer's name, or `moved_jobs` (how many matched jobs changed route or ending).
 * - STAT: `mean` (the default), `p50` or `p95`.
 * - OP: `<=`, `>=`, `<`, `>`, `==`.
 * - BOUND with a sign is a change from A to B: `+10%` relative to A, `-2pt` in percentage points
 *   (a rate's 0..1 times 100), `+0.01` in the scorer's own unit. Without a sign it is B's own
 *   value: `completed>=0.95`, `moved_jobs<=0`.
 */
import type { Comparison } from './compare';
import { tidy } from './stats';

export type GateOp = '<=' | '>=' | '<' | '>' | '==';
export type GateStat = 'mean' | 'p50' | 'p95';

export interface Gate {
  text: string;
  metric: string;
  stat: GateStat;
  op: GateOp;
  bound: number;
  /** `value`: B's own; `delta`: B minus A in the unit; `pt`: in points; `pct`: relative to A, in percent. */
  kind: 'value' | 'delta' | 'pt' | 'pct';
}

export interface GateResult {
  gate: string;
  ok: boolean;
  /** The number the gate compared (B's value, or the change), when there was one. */
  actual?: number;
  why: string;
}

export class GateSyntaxError extends Error {
  override readonly name = 'GateSyntaxError';
}

export const MOVED_JOBS = 'moved_jobs';
const GATE = /^\s*([a-z][a-z0-9_]*)(?:\.(mean|p50|p95))?\s*(<=|>=|==|<|>)\s*([+-]?)(\d+(?:\.\d+)?)\s*(%|pt)?\s*$/;

export function parseGate(text: string): Gate {
  const m = GATE.exec(text);
  if (!m)
    throw new GateSyntaxError(
      `gate "${text}" is not METRIC[.mean|.p50|.p95] OP BOUND (OP one of <= >= < > ==; BOUND like 0.95, +10%, -2pt, +0.01)`,
    );
  const [, metric, stat, op, sign, digits, unit] = m;
  if (unit && !sign)
    throw new GateSyntaxError(`gate "${text}": a bound in ${unit} is a change, so it takes a sign (+ or -)`);
  const magnitude = Number(digits);
  return {
    text,
    metric: metric!,
    stat: (stat as GateStat | undefined) ?? 'mean',
    op: op as GateOp,
    bound: sign === '-' ? -magnitude : magnitude,
    kind: unit === '%' ? 'pct' : unit === 'pt' ? 'pt' : sign ? 'delta' : 'value',
  };
}

const holds = (actual: number, op: GateOp, bound: number): boolean => {
  // Float noise (0.1 + 0.2) must not fail a gate that holds to the micro.
  const [x, y] = [tidy(actual), tidy(bound)];
  return op === '<=' ? x <= y : op === '>=' ? x >= y : op === '<' ? x < y : op === '>' ? x > y : x === y;
};

const shown = (n: number) => String(Number(n.toPrecision(6)));

/** The gate's number for this comparison, or why it has none. */
function measure(gate: Gate, c: Comparison): { actual: number } | { missing: string } {
  if (gate.metric === MOVED_JOBS) {
    if (gate.kind !== 'value')
      return { missing: `${MOVED_JOBS} is a count of B's moved jobs: give a bound without a sign` };
    return { actual: c.moved.length };
  }
  const scorer = c.scorers.find((s) => s.name === gate.metric);
  if (!scorer) return { missing: `no scorer named ${gate.metric} in either run` };
  const [a, b] = [scorer.a?.[gate.stat], scorer.b?.[gate.stat]];
  if (b === undefined) return { missing: `${gate.metric} has no values in B` };
  if (gate.kind === 'value') return { actual: b };
  if (a === undefined) return { missing: `${gate.metric} has no values in A to change from` };
  if (gate.kind === 'delta') return { actual: b - a };
  if (gate.kind === 'pt') {
    if (scorer.unit !== 'rate') return { missing: `${gate.metric} is not a rate: points apply to rates only` };
    return { actual: (b - a) * 100 };
  }
  if (a === 0) return b === 0 ? { actual: 0 } : { missing: `${gate.metric} was 0 in A: no relative change` };
  return { actual: ((b - a) / Math.abs(a)) * 100 };
}

const UNIT_SUFFIX: Record<Gate['kind'], string> = { value: '', delta: '', pt: 'pt', pct: '%' };

/** A gate with nothing to measure fails: a CI gate that silently passes on a typo gates nothing. */
export function checkGate(gate: Gate, c: Comparison): GateResult {
  const measured = measure(gate, c);
  if ('missing' in measured) return { gate: gate.text, ok: false, why: measured.missing };
  const ok = holds(measured.actual, gate.op, gate.bound);
  const sign = gate.kind === 'value' || measured.actual < 0 ? '' : '+';
  const unit = UNIT_SUFFIX[gate.kind];
  const what = gate.kind === 'value' ? `${gate.metric}.${gate.stat} is` : `${gate.metric}.${gate.stat} changed by`;
  return {
    gate: gate.text,
    ok,
    actual: measured.actual,
    why: `${what} ${sign}${shown(measured.actual)}${unit}; the gate wants ${gate.op} ${gate.kind === 'value' || gate.bound < 0 ? '' : '+'}${shown(gate.bound)}${unit}`,
  };
}
