/**
 * Differential: transcripts and trace files against karenina's own handover code, run by Python
 * on the same generated logs (stored form: canonical JSON), compared byte for byte. Needs
 * python3 and a karenina checkout named by KARENINA_SRC (its root or its `src`); without them
 * the suite is skipped and says why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { canonicalJson, formatTranscript, type ContentBlock, type TaggedMessage } from '../../../contracts';
import { applyHandover } from '../../../activities/handover';
import { onPath } from '../../../src/devtools/tool-cache';
import { edge, scratch, state } from './helpers';

const CASES = 400;
const DRIVER = join(__dirname, '..', '..', 'fixtures', 'karenina', 'run_handover.py');

function karenina(): { python: string; src: string } | string {
  const python = onPath('python3', process.env);
  if (!python) return 'python3 is not on PATH';
  const root = process.env.KARENINA_SRC;
  if (!root) return 'KARENINA_SRC names no karenina checkout';
  const src = [root, join(root, 'src')].find((dir) => existsSync(join(dir, 'karenina', 'scenario', 'handover.py')));
  return src === undefined ? `no karenina/scenario/handover.py under ${root}` : { python, src };
}

// Characters where Python and JavaScript part ways (repr escapes, strip's set, surrogate pairs),
// and plain ones. Left out on purpose, as documented differences: `[` (a line that starts with a
// tag re-parses as a message in karenina), `-` (the separator), and `<`, `>`, `&` (escaped here).
const char = fc.oneof(
  fc.constantFrom(...'abcxyz019 .,:;!?()\'"\\'.split('')),
  fc.constantFrom('\n', '\t', '\r', '\v', '\f', '\x00', '\x1c', '\x1f', '\x7f', '\x85', '\xa0', '\u200b', '\u2028'),
  fc.constantFrom('\u3000', '\ufeff', '\ue000', 'é', 'ß', '中', '😀', '\u{e0001}', '\u0378'),
);
const text = fc.string({ unit: char, maxLength: 24 });
const key = fc.oneof(fc.constantFrom('a', 'b', 'query', 'Z', 'é', '_k'), fc.integer({ min: 0, max: 20 }).map(String));
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { maxDepth: 2 },
    text,
    fc.integer({ min: -1e6, max: 1e6 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(0.1, 2.5e-5, 1e-4, 1e16, 1e21, 123.456, -1.5e-7, 5e-324),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3 }),
  ),
})).value;
const block: fc.Arbitrary<ContentBlock> = fc.oneof(
  text.map((t) => ({ type: 'text' as const, text: t })),
  text.map((t) => ({ type: 'thinking' as const, thinking: t })),
  fc.record({
    type: fc.constant('tool_use' as const),
    name: fc.constantFrom('search', 'get_page', ' padded'),
    input: fc.dictionary(key, json, { maxKeys: 4 }),
  }),
  text.map((t) => ({ type: 'tool_result' as const, content: t })),
);
const message: fc.Arbitrary<TaggedMessage> = fc.record({
  agent_id: fc.constantFrom('__user__', 'triage', 'model:v1', 'writer'),
  message: fc.record({
    role: fc.constantFrom('system', 'user', 'assistant', 'tool'),
    content: fc.array(block, { maxLength: 3 }),
  }),
});

const opensTurn = (m: TaggedMessage) => m.agent_id === '__user__' || m.message.role === 'user';
const shown = (m: TaggedMessage) => m.message.content.some((b) => b.type !== 'thinking');
/** Agent output before the first prompt is a documented difference (kept here, dropped there). */
const comparable = (log: TaggedMessage[]) => {
  if (!formatTranscript(log).includes('[__user__]')) return true;
  const first = log.find((m) => shown(m) && m.message.role !== 'system');
  return first !== undefined && opensTurn(first);
};
const logs = fc.array(message, { maxLength: 7 }).filter(comparable);

interface Seen {
  transcript: string;
  question: string;
  history: number;
  files: Record<string, string>;
}

/** handrail's side of one case, in the shape the driver prints for karenina's. */
function handrail(log: TaggedMessage[], to: string, turn: number, turnDir: string): Seen {
  const result = applyHandover(edge('transcript_materialize'), log, state({ to, turn }), 'Q', turnDir)!;
  const files: Record<string, string> = {};
  for (const entry of readdirSync(turnDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    files[full.slice(turnDir.length + 1)] = readFileSync(full, 'utf8');
  }
  return { transcript: formatTranscript(log), question: result.questionText, history: result.history.length, files };
}

const found = karenina();

afterEach(() => vi.unstubAllEnvs());

describe.skipIf(typeof found === 'string')(
  `transcripts and trace files against karenina's code${typeof found === 'string' ? ` (skipped: ${found})` : ''}`,
  () => {
    it(`agree byte for byte on ${CASES} generated logs`, () => {
      const { python, src } = found as { python: string; src: string };
      const cases = fc.sample(
        fc.record({ log: logs, to: fc.constantFrom('draft', 'judge😀', 'a/b c'), turn: fc.nat(9) }),
        { numRuns: CASES, seed: 41 },
      );
      const base = scratch();
      const dirOf = (side: string, i: number) => {
        const dir = join(base, side, String(i));
        mkdirSync(dir, { recursive: true });
        return dir;
      };
      // A low threshold so offloading is exercised too.
      const threshold = '40';
      const input = `[${cases
        .map(
          (c, i) =>
            `{"log":${canonicalJson(c.log)},"to":${JSON.stringify(c.to)},"turn":${c.turn},"turn_dir":${JSON.stringify(dirOf('py', i))}}`,
        )
        .join(',')}]`;
      const run = spawnSync(python, [DRIVER, src], {
        input,
        encoding: 'utf8',
        env: { ...process.env, KARENINA_TRACE_TRUNCATION_THRESHOLD: threshold },
        maxBuffer: 256 * 1024 * 1024,
      });
      expect(run.stderr).toBe('');
      const theirs = JSON.parse(run.stdout) as Seen[];
      vi.stubEnv('HANDRAIL_TRACE_OFFLOAD_THRESHOLD', threshold);
      const normalize = (seen: Seen, dir: string): Seen =>
        JSON.parse(JSON.stringify(seen).replaceAll(JSON.stringify(dir).slice(1, -1), '<TURN>')) as Seen;
      cases.forEach((c, i) => {
        const ours = normalize(handrail(c.log, c.to, c.turn, dirOf('ts', i)), join(base, 'ts', String(i)));
        expect(ours, `case ${i}: ${JSON.stringify(c.log)}`).toEqual(normalize(theirs[i]!, join(base, 'py', String(i))));
      });
    });
  },
);
