/**
 * Validations per second: ajv standalone (what the rail runs) vs zod safeParse, same fixtures.
 * Not a test; run with `npx tsx bench/contracts.ts [millisPerCase]`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HANDOFF_V1, handoffV1, validateHandoff, validators } from '../contracts';

const FIXTURES = join(__dirname, '../contracts/fixtures');
const load = (file: string): unknown => JSON.parse(readFileSync(join(FIXTURES, file), 'utf8'));
const millis = Number(process.argv[2] ?? 1000);

const sets: { name: string; packages: unknown[] }[] = [
  { name: 'valid (all optional fields)', packages: [load('valid.json')] },
  { name: 'reference example', packages: [load('seed-001-example.json')] },
  {
    name: 'invalid (missing fields, bad traceparent)',
    packages: (
      JSON.parse(readFileSync(join(FIXTURES, 'manifest.json'), 'utf8')) as {
        packages: { file: string; reason?: string }[];
      }
    ).packages
      .filter((p) => p.reason === 'schema')
      .map((p) => load(p.file)),
  },
];

/** Validations per second of each check over the packages (round-robin), `millis` each in all.
 * The checks take turns in short slices, so a change in the machine's load (shared with other
 * work) hits all of them alike and their ratios hold. */
function opsPerSecond(packages: unknown[], checks: ((pkg: unknown) => boolean)[]): number[] {
  let sink = 0;
  for (const fn of checks) for (let i = 0; i < 2_000; i++) sink += fn(packages[i % packages.length]) ? 1 : 0; // warm-up (JIT)
  const counts = checks.map(() => 0);
  const nanos = checks.map(() => 0n);
  const slices = 20;
  const slice = BigInt(Math.max(1, Math.round(millis / slices))) * 1_000_000n;
  for (let s = 0; s < slices; s++) {
    checks.forEach((fn, c) => {
      let n = 0;
      const start = process.hrtime.bigint();
      const deadline = start + slice;
      let now = start;
      while (now < deadline) {
        for (let i = 0; i < 64; i++, n++) sink += fn(packages[n % packages.length]) ? 1 : 0;
        now = process.hrtime.bigint();
      }
      counts[c]! += n;
      nanos[c]! += now - start;
    });
  }
  if (sink < 0) console.log(sink); // keeps the calls observable to the optimiser
  return counts.map((n, c) => n / (Number(nanos[c]!) / 1e9));
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(12);
console.log(`node ${process.version}, ${millis} ms per case\n`);
console.log(
  `${'fixtures'.padEnd(44)}${'ajv/s'.padStart(12)}${'zod/s'.padStart(12)}${'ajv:zod'.padStart(9)}${'validateHandoff/s'.padStart(19)}`,
);
for (const { name, packages } of sets) {
  const [ajv, zod, full] = opsPerSecond(packages, [
    (p) => validators.handoffV1(p),
    (p) => handoffV1.safeParse(p).success,
    (p) => validateHandoff(p, { accept: [HANDOFF_V1] }).ok,
  ]) as [number, number, number];
  console.log(
    `${name.padEnd(44)}${fmt(ajv)}${fmt(zod)}${`${(ajv / zod).toFixed(1)}x`.padStart(9)}${fmt(full).padStart(19)}`,
  );
}
