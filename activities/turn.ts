/**
 * One stage turn in the job's conversation: what the stage is handed over the edge it was
 * delivered on (seed 000's handover, applied here in the activity, never in workflow code), and
 * the messages it adds to the job's log. The stage asks `prompt()` for what to send its model —
 * exactly what the edge's handover produced — and tells `reply()` what it answered.
 */
import type { Artifact, Edge, EdgeOptions, HandoffV1, HandoverState, Message, Pipeline, StageCard, TaggedMessage } from '../contracts';
import { assistantMessage, canonicalJson, edgeProblems, handoverName, messageText, systemMessage, transcriptUri, USER_AGENT_ID, userMessage } from '../contracts';
import { clip } from '../contracts/errors';
import { sha256Hex } from '../src/worker/store/content';
import type { ChatMessage } from '../src/worker/model';
import type { Store } from '../src/worker/store';
import { stageFailure } from './failures';
import { ContextBudgetExceeded, fitHandover, HandoverError, turnDirFor } from './handover';
import { appendTurn, logMessages, readLog, type HandoverRecord } from './transcript-log';

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
  /** The job's log so far (oldest first), for stages that read it themselves. */
  readonly log: readonly TaggedMessage[];
  /** The prompt for this turn, with the edge's handover applied (once per turn; the first call wins). */
  prompt(input: { system?: string; question: string }): Promise<TurnPrompt>;
  /** Adds the stage's answer (assistant text, tool calls, tool results) to this turn. */
  reply(...messages: Message[]): void;
}

/** Where a worker's stages keep handover traces, and which model they run. */
export interface TurnOptions {
  /** Workspace root for `transcript_materialize` traces; unset, a temp directory per trace. */
  workspace?: string;
  /** The model's id: the agent identity of stages without one, and a workspace path segment. */
  modelId?: string;
}

/** A stage's default answer (its output body) is clipped: the body itself is in the store. */
const DEFAULT_REPLY_CHARS = 2_000;

export interface OpenTurn {
  turn: StageTurn;
  /** Records the turn and returns the log's new URI and the handover the stage got. */
  close(output: { artifact: Artifact; body: unknown }): Promise<{ transcript: string; handover: HandoverRecord | undefined }>;
}

/** Opens a turn on a delivered package: its log read and verified before any work is done. */
export async function openTurn(
  store: Store,
  pipeline: Pick<Pipeline, 'name' | 'handovers'>,
  card: StageCard,
  delivery: { package: HandoffV1; edge?: EdgeOptions | undefined },
  scopedJobId: string,
  options: TurnOptions = {},
): Promise<OpenTurn> {
  const pkg = delivery.package;
  const edge = resolveEdge(card, delivery.edge, pipeline.handovers);
  const log = await readLog(store, pkg, scopedJobId);
  const messages = logMessages(log);
  const from = pkg.hop?.from ?? '';
  const turnNumber = pkg.hop?.count ?? 0;
  const agentId = card.agent ?? options.modelId ?? card.name;
  const state: HandoverState = { job_id: pkg.job_id, pipeline: pipeline.name, from, to: card.name, turn: turnNumber, package: pkg };
  const replies: Message[] = [];
  let asked: { system: string | undefined; question: string; prompt: TurnPrompt; handover: HandoverRecord | undefined } | undefined;

  const prompt = async (input: { system?: string; question: string }): Promise<TurnPrompt> => {
    if (asked) return asked.prompt;
    const { result, used, tokens, fellBack } = handOver(edge, messages, state, input.question, () =>
      turnDirFor({ root: options.workspace!, job_id: pkg.job_id, model_id: options.modelId ?? 'offline', turn: turnNumber }),
    options.workspace);
    const questionText = result?.questionText ?? input.question;
    const history = result?.history ?? [];
    const handover = used === undefined ? undefined : { used, question_text: questionText, history, tokens, ...(fellBack ? { fell_back: true } : {}) };
    const chat: ChatMessage[] = [
      ...(input.system ? [{ role: 'system' as const, content: input.system }] : []),
      ...history.map(chatMessage),
      { role: 'user', content: questionText },
    ];
    asked = { system: input.system, question: input.question, prompt: { messages: chat, questionText, history, handover: used }, handover };
    return asked.prompt;
  };

  return {
    turn: { agentId, edge, log: messages, prompt, reply: (...m) => replies.push(...m) },
    async close(output) {
      // A stage that never asked still takes a turn: the rail's hop reason is its question, so the
      // edge's handover (and its cap) applies to every stage alike.
      if (!asked) await prompt({ question: pkg.hop?.reason ?? `deliver to ${card.name}` });
      const { system, question, handover } = asked!;
      const systemSha = system ? sha256Hex(system) : null;
      const last = log.turns[log.turns.length - 1];
      // Seed 000: a system message only when the identity or the system prompt changes.
      const changed = !last || last.agent_id !== agentId || last.system_sha !== systemSha;
      const turnMessages: TaggedMessage[] = [
        ...(system && changed ? [{ message: systemMessage(system), agent_id: agentId }] : []),
        // The stage's own question, not the handed-over one: a log holding every earlier
        // transcript again would grow with the square of the conversation.
        { message: userMessage(question), agent_id: USER_AGENT_ID },
        // A stage that said nothing answered with its output: the next stage reads what it made.
        ...(replies.length > 0 ? replies : [assistantMessage(`${output.artifact.type}: ${clip(canonicalJson(output.body ?? null), DEFAULT_REPLY_CHARS)}`)]).map((message) => ({ message, agent_id: agentId })),
      ];
      const sha = await appendTurn(store, {
        v: 1,
        job_id: scopedJobId,
        prev: log.head,
        stage: card.name,
        turn: turnNumber,
        agent_id: agentId,
        system_sha: systemSha,
        ...(handover ? { handover } : {}),
        messages: turnMessages,
      });
      return { transcript: transcriptUri(pkg.job_id, sha), handover };
    },
  };
}

/** The edge options the rail sent, checked, with their callable found in this worker's pipeline. */
function resolveEdge(card: StageCard, edge: EdgeOptions | undefined, handovers: Pipeline['handovers']): Edge | undefined {
  if (edge === undefined) return undefined;
  const problems = typeof edge === 'object' && edge !== null ? edgeProblems(edge, handovers) : ['the edge options are not an object'];
  if (problems.length > 0) throw stageFailure('HandoverFailed', `${card.name}: ${problems.join('; ')}`, { problems });
  return typeof edge.handover === 'object' ? { ...edge, callable: handovers[edge.handover.callable] } : edge;
}

/** The edge's handover within its cap; its failures as the stage failures the rail acks. */
function handOver(edge: Edge | undefined, log: readonly TaggedMessage[], state: HandoverState, question: string, turnDir: () => string, workspace: string | undefined) {
  try {
    return fitHandover(edge, log, state, question, workspace === undefined ? undefined : turnDir);
  } catch (error) {
    if (error instanceof ContextBudgetExceeded) {
      throw stageFailure('ContextBudgetExceeded', error.message, { tokens: error.tokens, max_tokens: error.maxTokens, strategy: error.strategy, handover: handoverName(edge) });
    }
    if (error instanceof HandoverError) throw stageFailure('HandoverFailed', error.message, { code: error.code, handover: handoverName(edge) });
    throw error;
  }
}

/** A log message as a chat endpoint takes it; tool results go back as the user's words. */
function chatMessage(message: Message): ChatMessage {
  return { role: message.role === 'tool' ? 'user' : message.role, content: messageText(message) };
}
