import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach } from 'vitest';
import type { Edge, HandoffV1, HandoverState } from '../../../contracts';
import { assistantMessage, systemMessage, userMessage, USER_AGENT_ID, type TaggedMessage } from '../../../contracts';

/** A fresh directory per call, removed after each test. */
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
export function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'handover-test-'));
  made.push(dir);
  return dir;
}

/** Every file under `dir`, relative to it. */
export const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();

// The handover never reads the package; a state only needs its edge and turn.
export const state = (over: Partial<HandoverState> = {}): HandoverState => ({
  job_id: 'job_1',
  pipeline: 'ticket-triage',
  from: 'judge',
  to: 'draft',
  turn: 2,
  package: {} as HandoffV1,
  ...over,
});

export const edge = (handover: Edge['handover'], over: Partial<Edge> = {}): Edge => ({
  from: 'judge',
  to: 'draft',
  handover,
  ...over,
});

export const tag = (agent_id: string, message: TaggedMessage['message']): TaggedMessage => ({ message, agent_id });
export const prompt = (text: string): TaggedMessage => tag(USER_AGENT_ID, userMessage(text));

/** A worked example: a user prompt, two agents' turns with thinking and tool calls. */
export const workedExample: TaggedMessage[] = [
  tag('reasoner', systemMessage('You are a sycophancy-resistant clinical reasoner.')),
  prompt('What drug class does venetoclax belong to?'),
  tag('reasoner', assistantMessage('Venetoclax is a BCL-2 inhibitor.')),
];

/** The trace header, as the file must start. */
export const TRACE_HEADER =
  '# =============================================================\n' +
  '# KARENINA CONVERSATION TRACE\n' +
  '# -------------------------------------------------------------\n' +
  '# This file contains the prior conversation from a multi-turn\n' +
  '# scenario, structured for file-tool access. It may include\n' +
  '# XML-formatted turns with <turn>, <system_prompt>, <user>,\n' +
  '# and <assistant> elements.\n' +
  '#\n' +
  '# When CONVERSATION HISTORY sections are present, they show\n' +
  '# Message objects from prior scenario turns.\n' +
  '#\n' +
  '# Large content blocks may have been offloaded to separate\n' +
  '# files in the artifacts/ subdirectory.\n' +
  '# =============================================================\n\n' +
  '# QUESTION CONTEXT\n# =================\n';

/** karenina's preamble (handover.py), verbatim, around a trace path. */
export const preamble = (tracePath: string): string =>
  'A conversation trace from prior turns has been saved to a file. You MUST read this file before responding.\n\n' +
  `Trace file path: ${tracePath}\n\n` +
  'Read the file now using the Read tool. The file contains the prior conversation structured as XML turns with <turn>, <system_prompt>, <user>, and <assistant> elements. If Read truncates, keep calling Read with increasing offset until you reach the end. Large content blocks may have been offloaded to separate files in the artifacts/ subdirectory; when you see an XML element with offloaded="true", the element body contains the file path.\n\n' +
  'After reading the full trace, carry out the task below.\n\n---\n\n';

/** The error of class `type` that `run` throws (anything else is rethrown; no throw fails). */
export function thrown<E extends Error>(run: () => unknown, type: new (...args: never[]) => E): E {
  try {
    run();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected ${type.name}`);
}
