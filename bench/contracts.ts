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
  { name: 'seed 001 example', packages: [load('seed-001-example.json')] },
  {
    name: 'invalid (missing fields, bad traceparent)',
    packages: (JSON.parse(readFileSync(join(FIXTURES, 'manifest.json'), 'utf8')) as { packages: { file: string; reason?: string }[] })
      .packages.filter((p) => p.reason === 'schema')
      .map((p) => load(p.file)),
  },
];

/** Runs `fn` over the packages round-robin for `millis` and returns validations per second. */
function opsPerSecond(packages: unknown[], fn: (pkg: unknown) => boolean): number {
  let sink = 0;
  for (let i = 0; i < 2_000; i++) sink += fn(packages[i % packages.length]) ? 1 : 0; // warm-up (JIT)
  let n = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(millis) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < 256; i++, n++) sink += fn(packages[n % packages.length]) ? 1 : 0;
    now = process.hrtime.bigint();
  }
  if (sink < 0) console.log(sink); // keeps the calls observable to the optimiser
  return n / (Number(now - start) / 1e9);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(12);
console.log(`node ${process.version}, ${millis} ms per case\n`);
console.log(`${'fixtures'.padEnd(44)}${'ajv/s'.padStart(12)}${'zod/s'.padStart(12)}${'ajv:zod'.padStart(9)}${'validateHandoff/s'.padStart(19)}`);
for (const { name, packages } of sets) {
  const ajv = opsPerSecond(packages, (p) => validators.handoffV1(p));
  const zod = opsPerSecond(packages, (p) => handoffV1.safeParse(p).success);
  const full = opsPerSecond(packages, (p) => validateHandoff(p, { accept: [HANDOFF_V1] }).ok);
  console.log(`${name.padEnd(44)}${fmt(ajv)}${fmt(zod)}${`${(ajv / zod).toFixed(1)}x`.padStart(9)}${fmt(full).padStart(19)}`);
}
