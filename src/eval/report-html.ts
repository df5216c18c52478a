/**
 * The comparison as one self-contained HTML file: no script, no stylesheet or font from elsewhere,
 * plots as inline SVG, so it opens offline and as a CI artifact. Pure: the caller writes it.
 */
import type { Comparison, ScorerComparison } from './compare';
import { comparisonText, valueText } from './format';
import type { GateResult } from './gate';

const COLOR = { a: '#3b6fd4', b: '#e0722a' } as const;

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const fixed = (n: number) => Number(n.toFixed(2));

interface Frame {
  width: number;
  height: number;
  pad: number;
}

function axes(f: Frame, x: string, y: string, xMax: string, yMax: string): string {
  const { width: w, height: h, pad: p } = f;
  return [
    `<line x1="${p}" y1="${h - p}" x2="${w - p / 2}" y2="${h - p}" stroke="#888"/>`,
    `<line x1="${p}" y1="${p / 2}" x2="${p}" y2="${h - p}" stroke="#888"/>`,
    `<text x="${w / 2}" y="${h - 6}" text-anchor="middle" font-size="12">${escape(x)}</text>`,
    `<text x="12" y="${h / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 12 ${h / 2})">${escape(y)}</text>`,
    `<text x="${p}" y="${h - p + 14}" font-size="10">0</text>`,
    `<text x="${w - p / 2}" y="${h - p + 14}" font-size="10" text-anchor="end">${escape(xMax)}</text>`,
    `<text x="${p - 4}" y="${p / 2 + 8}" font-size="10" text-anchor="end">${escape(yMax)}</text>`,
  ].join('');
}

/** Cost (x) against the critic's pass rate (y), one point per job and build; jobs without a critic are left out. */
export function costPassPlot(c: Comparison): string {
  const f: Frame = { width: 560, height: 360, pad: 48 };
  const points = c.pairs.flatMap((p) =>
    (['a', 'b'] as const).flatMap((side) => {
      const s = p[side].scores;
      return s.pass_rate === undefined || s.cost_per_job === undefined
        ? []
        : [{ side, case: p.case, cost: s.cost_per_job, pass: s.pass_rate }];
    }),
  );
  const maxCost = Math.max(1e-6, ...points.map((p) => p.cost));
  const x = (v: number) => f.pad + (v / maxCost) * (f.width - 1.5 * f.pad);
  const y = (v: number) => f.height - f.pad - v * (f.height - 1.5 * f.pad);
  const dots = points
    .map(
      (p) =>
        `<circle class="job-point" data-build="${p.side}" data-case="${escape(p.case)}" cx="${fixed(x(p.cost))}" cy="${fixed(y(p.pass))}" r="${p.side === 'a' ? 6 : 4}" fill="${COLOR[p.side]}" fill-opacity="0.55"><title>${escape(`${p.side.toUpperCase()} ${p.case}: $${p.cost}, pass rate ${Math.round(p.pass * 100)}%`)}</title></circle>`,
    )
    .join('');
  return `<svg id="cost-vs-pass" role="img" aria-label="cost against pass rate per job" width="${f.width}" height="${f.height}" viewBox="0 0 ${f.width} ${f.height}">${axes(f, 'cost per job (USD)', "critic's pass rate", `$${Number(maxCost.toFixed(6))}`, '100%')}${dots}</svg>`;
}

const BINS = 10;

/** A scorer's distribution in both builds: the same bins, A's bars beside B's. */
export function distributionPlot(s: ScorerComparison, c: Comparison): string {
  const f: Frame = { width: 320, height: 200, pad: 36 };
  const values = { a: c.pairs.map((p) => p.a.scores[s.name]), b: c.pairs.map((p) => p.b.scores[s.name]) };
  const all = [...values.a, ...values.b].filter((v): v is number => v !== undefined);
  if (all.length === 0) return '';
  const [lo, hi] = [Math.min(...all), Math.max(...all)];
  const width = hi > lo ? (hi - lo) / BINS : 1;
  const bin = (v: number) => Math.min(BINS - 1, Math.floor((v - lo) / width));
  const counts = { a: Array<number>(BINS).fill(0), b: Array<number>(BINS).fill(0) };
  for (const side of ['a', 'b'] as const) for (const v of values[side]) if (v !== undefined) counts[side][bin(v)]!++;
  const top = Math.max(1, ...counts.a, ...counts.b);
  const slot = (f.width - 1.5 * f.pad) / BINS;
  const bars = (['a', 'b'] as const)
    .flatMap((side, n) =>
      counts[side].map((count, i) => {
        const h = (count / top) * (f.height - 1.5 * f.pad);
        return count === 0
          ? ''
          : `<rect data-build="${side}" x="${fixed(f.pad + i * slot + (n * slot) / 2)}" y="${fixed(f.height - f.pad - h)}" width="${fixed(slot / 2 - 1)}" height="${fixed(h)}" fill="${COLOR[side]}"><title>${side.toUpperCase()}: ${count} job(s) from ${escape(valueText(s.unit, lo + i * width))}</title></rect>`;
      }),
    )
    .join('');
  return `<figure><svg class="distribution" data-scorer="${escape(s.name)}" width="${f.width}" height="${f.height}" viewBox="0 0 ${f.width} ${f.height}">${axes(f, `${s.name} (${valueText(s.unit, lo)} – ${valueText(s.unit, hi)})`, 'jobs', '', String(top))}${bars}</svg></figure>`;
}

export function htmlReport(c: Comparison, gates: readonly GateResult[] = [], title = 'handrail eval compare'): string {
  const failed = gates.filter((g) => !g.ok);
  const verdict =
    gates.length === 0
      ? ''
      : `<p id="gates" class="${failed.length ? 'fail' : 'pass'}">${failed.length ? `${failed.length} of ${gates.length} gate(s) failed` : `all ${gates.length} gate(s) passed`}</p><ul>${gates.map((g) => `<li class="${g.ok ? 'pass' : 'fail'}">${g.ok ? 'pass' : 'FAIL'} <code>${escape(g.gate)}</code>: ${escape(g.why)}</li>`).join('')}</ul>`;
  const plots = c.scorers.map((s) => distributionPlot(s, c)).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
pre{background:#f6f6f6;padding:12px;overflow-x:auto;font-size:12px}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
.fail{color:#b00020;font-weight:600}.pass{color:#1b7a2f}
figure{display:inline-block;margin:8px}
</style></head><body>
<h1>${escape(title)}</h1>
<p class="legend">A<span style="background:${COLOR.a}"></span> B<span style="background:${COLOR.b}"></span> · ${c.matched} matched jobs · ${c.moved.length} moved</p>
${verdict}
<h2>Cost against pass rate, per job</h2>
${costPassPlot(c)}
<h2>Score distributions</h2>
<div id="distributions">${plots}</div>
<h2>Table</h2>
<pre id="table">${escape(comparisonText(c, gates))}</pre>
</body></html>
`;
}
