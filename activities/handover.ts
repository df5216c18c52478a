/**
 * The handover, the I/O side: what the next stage sees of the job's conversation when a
 * hop crosses an edge. Transcript strategies inline the log into the question or write it to a
 * trace file the question points at (karenina's transcript_materialize); `history` passes the
 * messages through; a callable rewrites them. `fitHandover` adds the edge's token cap.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { countTokens, isWithinTokenLimit } from 'gpt-tokenizer';
import { z } from 'zod';
import { issueLines } from '../contracts/errors';
import { HANDOVER_STRATEGIES, handoverName, isCallable, type Edge, type HandoverState } from '../contracts/pipeline';
import {
  blockText,
  formatTranscript,
  Message,
  messageText,
  renderToolCall,
  TRANSCRIPT_SEPARATOR,
  USER_AGENT_ID,
  type ContentBlock,
  type TaggedMessage,
} from '../contracts/transcript';

export interface HandoverResult {
  questionText: string;
  history: Message[];
}

export type HandoverErrorCode =
  'unknown_strategy' | 'callable_not_registered' | 'callable_failed' | 'workspace_missing' | 'trace_write_failed';

export class HandoverError extends Error {
  override readonly name = 'HandoverError';
  constructor(
    readonly code: HandoverErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const edgeLabel = (edge: Pick<Edge, 'from' | 'to'>) => `${edge.from} → ${edge.to}`;
const osMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** karenina's preamble, verbatim: the agent reads the trace before it sees the task. */
const materializePreamble = (tracePath: string): string =>
  'A conversation trace from prior turns has been saved to a file. You MUST read this file before responding.\n\n' +
  `Trace file path: ${tracePath}\n\n` +
  'Read the file now using the Read tool. The file contains the prior conversation structured as XML turns with <turn>, ' +
  '<system_prompt>, <user>, and <assistant> elements. If Read truncates, keep calling Read with increasing offset until you reach the end. ' +
  'Large content blocks may have been offloaded to separate files in the artifacts/ subdirectory; when you see an XML element with ' +
  'offloaded="true", the element body contains the file path.\n\n' +
  'After reading the full trace, carry out the task below.\n\n---\n\n';

/**
 * Applies an edge's handover: undefined when the edge has no handover (the caller decides what a
 * bare edge means); otherwise the next stage's question and conversation history.
 * `turnDir` hosts the trace of `transcript_materialize` (a temp directory without it).
 */
export function applyHandover(
  edge: Edge | undefined,
  log: readonly TaggedMessage[],
  state: HandoverState,
  questionText: string,
  turnDir?: string,
): HandoverResult | undefined {
  const handover = edge?.handover;
  if (edge === undefined || handover === undefined) return undefined;
  if (handover === 'history') return { questionText, history: log.map((m) => m.message) };
  if (isCallable(handover)) return { questionText, history: callHandover(edge, handover.callable, log, state) };
  switch (handover) {
    case 'transcript_prepend':
      return { questionText: formatTranscript(log) + TRANSCRIPT_SEPARATOR + questionText, history: [] };
    case 'transcript_append':
      return { questionText: questionText + TRANSCRIPT_SEPARATOR + formatTranscript(log), history: [] };
    case 'transcript_materialize': {
      // The hash keeps traces of different conversations into one stage from overwriting each other.
      const hash = createHash('sha256').update(formatTranscript(log), 'utf8').digest('hex').slice(0, 10);
      const tracePath = materializeTrace(log, {
        traceDir: turnDir,
        questionId: `${state.to}_${hash}_handover`,
        turn: state.turn,
      });
      return { questionText: materializePreamble(tracePath) + questionText, history: [] };
    }
    default:
      throw new HandoverError(
        'unknown_strategy',
        `The handover on edge ${edgeLabel(edge)} names the unknown strategy ${JSON.stringify(handover)}; known: history, ${HANDOVER_STRATEGIES.join(', ')}, or { callable: name }.`,
      );
  }
}

const MessageList = z.array(Message);

function callHandover(edge: Edge, name: string, log: readonly TaggedMessage[], state: HandoverState): Message[] {
  if (typeof edge.callable !== 'function') {
    throw new HandoverError(
      'callable_not_registered',
      `The handover on edge ${edgeLabel(edge)} names the callable ${JSON.stringify(name)}, but no function was resolved for it; register it in the pipeline's handovers.`,
    );
  }
  let returned: unknown;
  try {
    returned = edge.callable(log, state);
  } catch (err) {
    throw new HandoverError(
      'callable_failed',
      `The handover callable ${JSON.stringify(name)} on edge ${edgeLabel(edge)} threw: ${osMessage(err)}.`,
    );
  }
  const parsed = MessageList.safeParse(returned);
  if (!parsed.success) {
    throw new HandoverError(
      'callable_failed',
      `The handover callable ${JSON.stringify(name)} on edge ${edgeLabel(edge)} did not return a list of messages: ${issueLines(parsed.error, 'result', 3).join('; ')}.`,
    );
  }
  return parsed.data;
}

// ---------------------------------------------------------------------------------------------
// Trace files (karenina's materialize_trace)

const DEFAULT_TRACE_OFFLOAD_THRESHOLD = 2000;

const TRACE_HEADER =
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
  '# =============================================================\n\n';

// Per code point, as Python's re does: an emoji is one `_`, not one per UTF-16 half.
const safeName = (s: string) => s.replace(/[^a-zA-Z0-9_-]/gu, '_');

function thresholdFromEnv(): number {
  const raw = process.env.HANDRAIL_TRACE_OFFLOAD_THRESHOLD?.trim();
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : DEFAULT_TRACE_OFFLOAD_THRESHOLD;
}

/**
 * Writes the log as XML turns to `<traceDir>/traces/<id>[_turn<N>]_trace.txt` (blocks over the
 * threshold offloaded to `traces/artifacts/`), or to a fresh temp directory without offloading
 * when there is no traceDir. Returns the absolute path of the trace.
 */
export function materializeTrace(
  log: readonly TaggedMessage[],
  options: { traceDir?: string; questionId: string; turn?: number; offloadThreshold?: number },
): string {
  const fileName = `${safeName(options.questionId)}${options.turn === undefined ? '' : `_turn${options.turn}`}_trace.txt`;
  const tracesDir = options.traceDir === undefined ? undefined : path.resolve(options.traceDir, 'traces');
  const artifactsDir = tracesDir === undefined ? undefined : path.join(tracesDir, 'artifacts');
  const { context, artifacts } = questionContext(log, artifactsDir, options.offloadThreshold ?? thresholdFromEnv());
  let target = tracesDir ?? path.join(os.tmpdir(), 'handrail_traces_');
  try {
    let dir = target;
    if (tracesDir === undefined) dir = fs.mkdtempSync(target);
    else fs.mkdirSync(tracesDir, { recursive: true });
    if (artifactsDir !== undefined && artifacts.length > 0) {
      target = artifactsDir;
      fs.mkdirSync(artifactsDir, { recursive: true });
    }
    for (const artifact of artifacts) {
      target = artifact.path;
      fs.writeFileSync(artifact.path, artifact.content, 'utf8');
    }
    target = path.join(dir, fileName);
    fs.writeFileSync(target, `${TRACE_HEADER}# QUESTION CONTEXT\n# =================\n${context}\n\n`, 'utf8');
    return target;
  } catch (err) {
    throw new HandoverError(
      'trace_write_failed',
      `The handover trace could not be written at ${target}: ${osMessage(err)}.`,
    );
  }
}

/**
 * What karenina writes under QUESTION CONTEXT for a transcript handed over with a closing
 * separator: the XML turns and a blank line where the (empty) task would follow; a transcript
 * without a `[__user__]` line (no prompt at all, or the empty log) as it is, separator included.
 */
function questionContext(
  log: readonly TaggedMessage[],
  artifactsDir: string | undefined,
  threshold: number,
): { context: string; artifacts: { path: string; content: string }[] } {
  const transcript = formatTranscript(log);
  if (!transcript.includes(`[${USER_AGENT_ID}]`)) return { context: transcript + TRANSCRIPT_SEPARATOR, artifacts: [] };
  const { xml, artifacts } = turnsAsXml(groupTurns(log), artifactsDir, threshold);
  return { context: `${xml}\n\n`, artifacts };
}

type AssistantBlock = { tag: 'text' | 'tool_result'; body: string } | { tag: 'tool_call'; name: string; body: string };

interface Turn {
  system?: { agent: string; text: string };
  /** A hook result (a decided escalation record's delta, re-injected): a turn of its own,
   * neither the user's nor an agent's. */
  hook?: { event: string; text: string };
  user?: string;
  agent?: string;
  blocks: AssistantBlock[];
}

type ShownBlock = Exclude<ContentBlock, { type: 'thinking' }>;

/** A tool call as karenina reads it back from its transcript line: the name up to the first `(`,
 * the arguments between it and the closing `)` (stripped first, as that line is). */
function toolCallBlock(name: string, input: Record<string, unknown>): AssistantBlock {
  const raw = pyStrip(renderToolCall(name, input));
  const paren = raw.indexOf('(');
  return paren > 0 && raw.endsWith(')')
    ? { tag: 'tool_call', name: raw.slice(0, paren), body: raw.slice(paren + 1, -1) }
    : { tag: 'tool_call', name: 'unknown', body: raw };
}

const assistantBlock = (b: ShownBlock): AssistantBlock =>
  b.type === 'text'
    ? { tag: 'text', body: b.text }
    : b.type === 'tool_use'
      ? toolCallBlock(b.name, b.input)
      : { tag: 'tool_result', body: b.content };

/**
 * karenina's group_entries_into_turns, over the structured log rather than re-parsed transcript
 * lines (a message that itself holds a transcript or the separator cannot split a turn): every
 * block of a prompt (`__user__`, whatever its role, or a user-role message) opens a turn; a system
 * message's last block is the next turn's system prompt. Two deliberate differences: agent blocks
 * before the first prompt open a turn of their own instead of being dropped, and a hook result
 * is a turn of its own (`<hook_result>`), so it is read neither as the user's words nor as the
 * previous agent's.
 */
function groupTurns(log: readonly TaggedMessage[]): Turn[] {
  const turns: Turn[] = [];
  let pendingSystem: Turn['system'];
  let current: Turn | undefined;
  for (const { message, agent_id, origin } of log) {
    const blocks = message.content.filter((b): b is ShownBlock => b.type !== 'thinking');
    if (blocks.length === 0) continue;
    if (origin?.kind === 'hook_result') {
      turns.push({ hook: { event: origin.event, text: messageText(message) }, blocks: [] });
      current = undefined;
    } else if (agent_id === USER_AGENT_ID || message.role === 'user') {
      for (const block of blocks) {
        current = { system: pendingSystem, user: blockText(block), blocks: [] };
        turns.push(current);
        pendingSystem = undefined;
      }
    } else if (message.role === 'system') {
      pendingSystem = { agent: agent_id, text: blockText(blocks.at(-1)!)! };
    } else {
      if (current === undefined) {
        current = { system: pendingSystem, blocks: [] };
        turns.push(current);
        pendingSystem = undefined;
      }
      current.agent ??= agent_id;
      current.blocks.push(...blocks.map(assistantBlock));
    }
  }
  if (pendingSystem !== undefined) turns.push({ system: pendingSystem, blocks: [] });
  return turns;
}

/** Python's str.isspace set, which str.strip removes (JavaScript's trim differs: it keeps
 * U+001C–U+001F and U+0085 and removes U+FEFF). */
const PY_SPACE = /[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/** Python's str.strip(). */
function pyStrip(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && PY_SPACE.test(s[start]!)) start++;
  while (end > start && PY_SPACE.test(s[end - 1]!)) end--;
  return s.slice(start, end);
}

// Unlike karenina, bodies and attributes are escaped: an entry holding `</user>` cannot forge turns.
const escapeText = (s: string) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
const escapeAttr = (s: string) => s.replace(/[&"<]/g, (c) => ({ '&': '&amp;', '"': '&quot;', '<': '&lt;' })[c]!);
/** Python's len (code points), so thresholds and counts match karenina's. */
const charCount = (s: string) => s.length - (s.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);

/** karenina's format_turns_as_xml, indentation and all. */
function turnsAsXml(
  turns: readonly Turn[],
  artifactsDir: string | undefined,
  threshold: number,
): { xml: string; artifacts: { path: string; content: string }[] } {
  const artifacts: { path: string; content: string }[] = [];
  let offloaded = 0;
  const parts: string[] = [];
  const lines = (indent: string, text: string) => {
    for (const line of text.split('\n')) parts.push(`${indent}${escapeText(line)}`);
  };
  const emit = (tag: AssistantBlock['tag'], attrs: string, raw: string) => {
    const content = pyStrip(raw);
    let body = content;
    let mark = '';
    if (artifactsDir !== undefined && charCount(content) > threshold) {
      // One counter for the whole trace, whatever the kind (text_001.txt, then tool_call_002.txt).
      offloaded++;
      const file = path.join(artifactsDir, `${tag}_${String(offloaded).padStart(3, '0')}.txt`);
      artifacts.push({ path: file, content });
      body = `[Content offloaded: ${charCount(content).toLocaleString('en-US')} chars]\nFile: ${file}`;
      mark = ' offloaded="true"';
    }
    parts.push(`    <${tag}${attrs}${mark}>`);
    lines('      ', body);
    parts.push(`    </${tag}>`);
  };

  turns.forEach((turn, i) => {
    parts.push(`<turn number="${i + 1}">`);
    if (turn.system !== undefined && turn.system.text !== '') {
      parts.push(`  <system_prompt agent="${escapeAttr(turn.system.agent)}">`);
      lines('    ', pyStrip(turn.system.text));
      parts.push('  </system_prompt>');
    }
    if (turn.hook !== undefined) {
      parts.push(`  <hook_result event="${escapeAttr(turn.hook.event)}">`);
      lines('    ', pyStrip(turn.hook.text));
      parts.push('  </hook_result>');
    }
    if (turn.user !== undefined) {
      parts.push('  <user>');
      lines('    ', pyStrip(turn.user));
      parts.push('  </user>');
    }
    if (turn.blocks.length > 0) {
      parts.push(`  <assistant agent="${escapeAttr(turn.agent ?? 'unknown')}">`);
      let lastTool = 'unknown';
      for (const block of turn.blocks) {
        if (block.tag === 'tool_call') lastTool = block.name;
        const name = block.tag === 'text' ? '' : ` name="${escapeAttr(lastTool)}"`;
        emit(block.tag, name, block.body);
      }
      parts.push('  </assistant>');
    }
    parts.push('</turn>', '');
  });
  return { xml: parts.join('\n'), artifacts };
}

/** The log as the XML turns a trace file holds, nothing offloaded (`handrail transcript --format xml`). */
export function transcriptXml(log: readonly TaggedMessage[]): string {
  return turnsAsXml(groupTurns(log), undefined, Number.POSITIVE_INFINITY).xml;
}

// ---------------------------------------------------------------------------------------------
// Workspace

/** Why `root` cannot be a workspace (it does not exist, is not a directory, cannot be read), or undefined. */
export function workspaceProblem(root: string): string | undefined {
  try {
    const stat = fs.statSync(root, { throwIfNoEntry: false });
    if (stat === undefined) return `the workspace root ${root} does not exist`;
    return stat.isDirectory() ? undefined : `the workspace root ${root} is not a directory`;
  } catch (err) {
    return `the workspace root ${root} cannot be read: ${osMessage(err)}`;
  }
}

/** A job's folder, one to one: job ids are already file-name safe, and `direct:` deliveries (a
 * scope no job id can spell) get `_direct_` (no job id starts with `_`), so no two jobs — or a
 * job and direct deliveries under its id — ever share trace files. */
function jobFolder(jobId: string): string {
  const [, direct, id = ''] = /^(direct:)?(.*)$/s.exec(jobId)!;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(id))
    throw new HandoverError(
      'workspace_missing',
      `${JSON.stringify(jobId)} is not a job id a workspace folder can be named after.`,
    );
  return direct ? `_direct_${id}` : id;
}

/**
 * The seed's per-turn workspace, `<root>/<job>/<model>/turn_<N>` (the job stands in for the
 * scenario), created on demand. The root itself is configuration: a missing one is refused,
 * never created.
 */
export function turnDirFor(ws: { root: string; job_id: string; model_id: string; turn: number }): string {
  const root = path.resolve(ws.root);
  const problem = workspaceProblem(root);
  if (problem !== undefined)
    throw new HandoverError(
      'workspace_missing',
      `${problem[0]!.toUpperCase()}${problem.slice(1)}; create it or fix the configured root (handrail does not create it).`,
    );
  const dir = path.join(root, jobFolder(ws.job_id), safeName(ws.model_id), `turn_${ws.turn}`);
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new HandoverError('trace_write_failed', `The turn directory ${dir} could not be created: ${osMessage(err)}.`);
  }
  return dir;
}

// ---------------------------------------------------------------------------------------------
// Context budget

const texts = (result: HandoverResult) => [result.questionText, ...result.history.map(messageText)];

/** What the handover puts before the model: the question plus every history message's text. */
export function handoverTokens(result: HandoverResult): number {
  return texts(result).reduce((n, text) => n + countTokens(text), 0);
}

/** The tokens when within `cap`, else false; stops encoding once over, so a huge log is cheap to refuse. */
function tokensWithin(result: HandoverResult, cap: number): number | false {
  let used = 0;
  for (const text of texts(result)) {
    const n = isWithinTokenLimit(text, cap - used);
    if (n === false) return false;
    used += n;
  }
  return used;
}

export class ContextBudgetExceeded extends Error {
  override readonly name = 'ContextBudgetExceeded';
  readonly code = 'context_budget_exceeded';
  constructor(
    edge: Pick<Edge, 'from' | 'to'>,
    readonly tokens: number,
    readonly maxTokens: number,
    readonly strategy: string,
    fellBackFrom?: string,
  ) {
    super(
      `the handover on ${edgeLabel(edge)} is ${tokens.toLocaleString('en-US')} tokens, over the edge's cap of ` +
        `${maxTokens.toLocaleString('en-US')} (strategy ${strategy}${fellBackFrom === undefined ? '' : `, the overflow fallback after ${fellBackFrom} was over too`})`,
    );
  }
}

export interface FittedHandover {
  result: HandoverResult | undefined;
  /** handoverName of what was finally applied. */
  used: string | undefined;
  tokens: number;
  fellBack: boolean;
}

/**
 * applyHandover under the edge's `maxTokens`: over it, `overflow: 'transcript_materialize'`
 * retries as a trace file; still over (or no fallback), ContextBudgetExceeded. Never truncates.
 * `turnDir` may be a thunk so the workspace is made only when a trace is written.
 */
export function fitHandover(
  edge: Edge | undefined,
  log: readonly TaggedMessage[],
  state: HandoverState,
  questionText: string,
  turnDir?: string | (() => string),
): FittedHandover {
  const apply = (e: Edge) =>
    applyHandover(
      e,
      log,
      state,
      questionText,
      e.handover === 'transcript_materialize' ? (typeof turnDir === 'function' ? turnDir() : turnDir) : undefined,
    );
  const result = edge === undefined ? undefined : apply(edge);
  if (edge === undefined || result === undefined)
    return { result, used: handoverName(edge), tokens: 0, fellBack: false };
  const cap = edge.maxTokens;
  if (cap === undefined) return { result, used: handoverName(edge), tokens: handoverTokens(result), fellBack: false };

  const tokens = tokensWithin(result, cap);
  if (tokens !== false) return { result, used: handoverName(edge), tokens, fellBack: false };
  if (edge.overflow !== 'transcript_materialize' || edge.handover === 'transcript_materialize') {
    throw new ContextBudgetExceeded(edge, handoverTokens(result), cap, handoverName(edge)!);
  }
  const fallback: Edge = { ...edge, handover: 'transcript_materialize' };
  const materialized = apply(fallback)!;
  const fallbackTokens = tokensWithin(materialized, cap);
  if (fallbackTokens === false)
    throw new ContextBudgetExceeded(
      edge,
      handoverTokens(materialized),
      cap,
      'transcript_materialize',
      handoverName(edge),
    );
  return { result: materialized, used: handoverName(fallback), tokens: fallbackTokens, fellBack: true };
}
