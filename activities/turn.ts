/**
 * One stage turn in the job's conversation: what the stage is handed over the edge it was
 * delivered on (its handover, applied here in the activity, never in workflow code), and
 * the messages it adds to the job's log. The stage asks `prompt()` for what to send its model —
 * exactly what the edge's handover produced — and tells `reply()` what it answered. A stage that
 * never asks takes no handover: it sends nothing anywhere the conversation could go.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type {
  Artifact,
  Edge,
  EdgeOptions,
  HandoffV1,
  HandoverState,
  HookResult,
  Message,
  Pipeline,
  StageCard,
  TaggedMessage,
} from '../contracts';
import {
  assistantMessage,
  canonicalJson,
  clip,
  edgeProblems,
  handoverName,
  HUMAN,
  isAgentId,
  isCallable,
  isTranscriptUri,
  LIMITS,
  messageText,
  systemMessage,
  transcriptUri,
  USER_AGENT_ID,
  userMessage,
} from '../contracts';
import { sha256Hex } from '../src/worker/store/content';
import type { ChatMessage } from '../src/worker/model';
import type { Store } from '../src/worker/store';
import { stageFailure } from './failures';
import { ContextBudgetExceeded, fitHandover, HandoverError, turnDirFor } from './handover';
import { appendTurn, readHead, type HandoverRecord } from './transcript-log';

export interface TurnPrompt {
  /** What to send a chat model: the system prompt, the handover's history, then the question. */
  messages: ChatMessage[];
  /** The question as handed over (the transcript inlined, or the trace file's preamble). */
  questionText: string;
  history: Message[];
  /** The handover used (`transcript_prepend`, `callable:<name>`, …); undefined: the package only. */
  handover: string | undefined;
}

export interface StageTurn {
  /** The identity this stage's messages carry in the log. */
  readonly agentId: string;
  /** The edge the package came over, and its handover options. */
  readonly edge: Edge | undefined;
  /** The job's log so far, oldest first (read from the store on first call). */
  conversation(): Promise<readonly TaggedMessage[]>;
  /** The prompt for this turn, with the edge's handover applied and its token cap checked: call
   * it before the model. Asking again returns the same prompt; asking another question throws. */
  prompt(input: { system?: string; question: string }): Promise<TurnPrompt>;
  /** Adds the stage's answer (assistant text, tool calls, tool results) to this turn. */
  reply(...messages: Message[]): void;
  /** The delivery this turn answers (as scoped by who delivers): the key under which a model
   * stage records its completed steps, so a retried attempt resumes after them. */
  readonly deliveryKey?: string;
  /** The hook results this delivery brought beside the package (a human's decided escalation
   * record, say), as the turn logs them. */
  readonly hooks?: readonly HookResult[];
}

/** Where a worker's stages keep handover traces, and which model they run. */
export interface TurnOptions {
  /** Workspace root for `transcript_materialize` traces; unset, `<tmp>/handrail-workspace`. */
  workspace?: string;
  /** The model's id: the agent identity of stages without one, and a workspace path segment. */
  modelId?: string;
}

export interface OpenTurn {
  turn: StageTurn;
  /** Records the turn and returns the log's new URI and the handover the stage got. */
  close(output: {
    artifact: Artifact;
    body: unknown;
  }): Promise<{ transcript: string; handover: HandoverRecord | undefined }>;
}

/** A stage's default answer (its output body) is clipped: the body itself is in the store. */
const DEFAULT_REPLY_CHARS = 2_000;
/** Traces of workers created without a workspace: one fixed root, so a retried hop writes the same path. */
const TEMP_WORKSPACE = path.join(os.tmpdir(), 'handrail-workspace');

/** Opens a turn on a delivered package: its edge and the head of its log checked before any work. */
export async function openTurn(
  store: Store,
  pipeline: Pick<Pipeline, 'name' | 'handovers'>,
  card: StageCard,
  delivery: {
    package: HandoffV1;
    edge?: EdgeOptions | undefined;
    hooks?: HookResult[] | undefined;
    key?: string;
  },
  scopedJobId: string,
  options: TurnOptions = {},
): Promise<OpenTurn> {
  const pkg = delivery.package;
  const edge = resolveEdge(card, delivery.edge, pipeline.handovers);
  // The emitted package adds the log's URI: a package with no room for it is refused now, not after the work.
  if (pkg.memory_refs.filter((r) => !isTranscriptUri(r)).length >= LIMITS.listItems) {
    throw stageFailure(
      'StageInputInvalid',
      `${card.name}: memory_refs holds ${LIMITS.listItems} refs; the job's transcript needs one of them`,
    );
  }
  const hooks = hookMessages(card, delivery.hooks);
  const log = await readHead(store, pkg, scopedJobId);
  const turnNumber = pkg.hop?.count ?? 0;
  const agentId = card.agent ?? agentOfModel(options.modelId) ?? card.name;
  const state: HandoverState = {
    job_id: pkg.job_id,
    pipeline: pipeline.name,
    from: edge?.from ?? pkg.hop?.from ?? '',
    to: card.name,
    turn: turnNumber,
    package: pkg,
  };
  const replies: Message[] = [];
  let asked:
    | { system: string | undefined; question: string; prompt: TurnPrompt; handover: HandoverRecord | undefined }
    | undefined;

  const prompt = async (input: { system?: string; question: string }): Promise<TurnPrompt> => {
    if (asked) {
      if (asked.question !== input.question || asked.system !== input.system)
        throw new Error(`${card.name}: turn.prompt() was asked twice with different prompts; a turn has one`);
      return asked.prompt;
    }
    // Only a handover reads the whole log; a package-only edge costs one record.
    const messages = edge?.handover === undefined ? [] : await log.messages();
    const root = options.workspace ?? TEMP_WORKSPACE;
    const { result, used, tokens, fellBack } = handOver(edge, messages, state, input.question, () => {
      // The fallback root is ours to make; a configured one must exist (turnDirFor says so).
      if (options.workspace === undefined) fs.mkdirSync(root, { recursive: true });
      return turnDirFor({ root, job_id: scopedJobId, model_id: options.modelId ?? 'offline', turn: turnNumber });
    });
    const questionText = result?.questionText ?? input.question;
    // Hook results (a decided escalation record's delta) come right before the question, after any
    // history the edge's handover gave (a transcript strategy puts the log into the question).
    const history = [...(result?.history ?? []), ...hooks.map((h) => h.message)];
    const handover =
      used === undefined
        ? undefined
        : { used, question_text: questionText, history, tokens, ...(fellBack ? { fell_back: true } : {}) };
    const chat: ChatMessage[] = [
      ...(input.system ? [{ role: 'system' as const, content: input.system }] : []),
      ...history.map(chatMessage),
      { role: 'user', content: questionText },
    ];
    asked = {
      system: input.system,
      question: input.question,
      prompt: { messages: chat, questionText, history, handover: used },
      handover,
    };
    return asked.prompt;
  };

  return {
    turn: {
      agentId,
      edge,
      conversation: () => log.messages(),
      prompt,
      reply: (...m) => replies.push(...m),
      ...(delivery.key === undefined ? {} : { deliveryKey: delivery.key }),
      hooks: delivery.hooks ?? [],
    },
    async close(output) {
      // A stage that never asked logs the rail's hop reason as its question, and took no handover.
      const question = asked?.question ?? pkg.hop?.reason ?? `deliver to ${card.name}`;
      const system = asked?.system;
      const systemSha = system ? sha256Hex(system) : null;
      const last = log.turn;
      // A system message only when the identity or the system prompt changes.
      const changed = !last || last.agent_id !== agentId || last.system_sha !== systemSha;
      const turnMessages: TaggedMessage[] = [
        // The hook first: it came before the stage's turn, and it is no part of the stage's prompt.
        ...hooks,
        ...(system && changed ? [{ message: systemMessage(system), agent_id: agentId }] : []),
        // The stage's own question, not the handed-over one: a log holding every earlier
        // transcript again would grow with the square of the conversation.
        { message: userMessage(question), agent_id: USER_AGENT_ID },
        // A stage that said nothing answered with its output: the next stage reads what it made.
        ...(replies.length > 0
          ? replies
          : [
              assistantMessage(
                `${output.artifact.type}: ${clip(canonicalJson(output.body ?? null), DEFAULT_REPLY_CHARS)}`,
              ),
            ]
        ).map((message) => ({ message, agent_id: agentId })),
      ];
      const sha = await appendTurn(store, {
        job_id: scopedJobId,
        prev: log.sha,
        stage: card.name,
        turn: turnNumber,
        agent_id: agentId,
        system_sha: systemSha,
        ...(asked?.handover ? { handover: asked.handover } : {}),
        messages: turnMessages,
      });
      return { transcript: transcriptUri(pkg.job_id, sha), handover: asked?.handover };
    },
  };
}

/** A decided record's delta is its summary, questions and steps: bounded by theirs, with room. */
const HookResults = z
  .array(z.object({ event: z.string().min(1).max(LIMITS.name), text: z.string().min(1).max(100_000) }))
  .max(4);

/** Hook results as the turn logs them: the human's messages, marked by their origin, so no
 * strategy or import reads them as the user's input. */
function hookMessages(card: StageCard, hooks: HookResult[] | undefined): TaggedMessage[] {
  if (hooks === undefined) return [];
  const parsed = HookResults.safeParse(hooks);
  if (!parsed.success)
    throw stageFailure(
      'StageInputInvalid',
      `${card.name}: hook_results must be at most 4 {event, text} with text up to 100,000 characters`,
    );
  return parsed.data.map((h) => ({
    message: assistantMessage(h.text),
    agent_id: HUMAN,
    origin: { kind: 'hook_result', event: h.event },
  }));
}

/** A model id as an agent id (the fallback identity): one label token, never the user's. */
function agentOfModel(modelId: string | undefined): string | undefined {
  if (modelId === undefined) return undefined;
  const agent = modelId
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, LIMITS.name);
  return isAgentId(agent) ? agent : undefined;
}

/** The edge options the rail sent, checked, with their callable found in this worker's pipeline. */
function resolveEdge(
  card: StageCard,
  edge: EdgeOptions | undefined,
  handovers: Pipeline['handovers'],
): Edge | undefined {
  if (edge === undefined) return undefined;
  const problems =
    typeof edge === 'object' && edge !== null ? edgeProblems(edge, handovers) : ['the edge options are not an object'];
  if (problems.length > 0) throw stageFailure('HandoverFailed', `${card.name}: ${problems.join('; ')}`, { problems });
  return isCallable(edge.handover) ? { ...edge, callable: handovers[edge.handover.callable] } : edge;
}

/** The edge's handover within its cap; its failures as the stage failures the rail acks. */
function handOver(
  edge: Edge | undefined,
  log: readonly TaggedMessage[],
  state: HandoverState,
  question: string,
  turnDir: () => string,
) {
  try {
    return fitHandover(edge, log, state, question, turnDir);
  } catch (error) {
    if (error instanceof ContextBudgetExceeded) {
      throw stageFailure('ContextBudgetExceeded', error.message, {
        tokens: error.tokens,
        max_tokens: error.maxTokens,
        strategy: error.strategy,
        handover: handoverName(edge),
      });
    }
    if (error instanceof HandoverError)
      throw stageFailure('HandoverFailed', error.message, { code: error.code, handover: handoverName(edge) });
    throw error;
  }
}

/** A log message as a chat endpoint takes it; tool results go back as the user's words. */
function chatMessage(message: Message): ChatMessage {
  return { role: message.role === 'tool' ? 'user' : message.role, content: messageText(message) };
}
