/** What the model-stage tests share: the worker's model on a scripted server, and a stage turn
 * whose prompt is the question as asked (no handover) and whose replies the test keeps. */
import { defineStage, userMessage, type Message, type ToolGrant } from '../../../contracts';
import type { StageTurn } from '../../../activities/turn';
import { createChatModel, type ChatModel } from '../../../src/worker/model';
import { toolResultsIn, type ScriptedModel, type ScriptedReply } from '../../helpers/scripted-model';

/** 1,000 prompt tokens at $2/M + 100 completion tokens at $10/M: $0.003 a step. */
export const STEP_USD = 0.003;

export const scriptedChatModel = (server: ScriptedModel): ChatModel =>
  createChatModel({
    baseUrl: server.baseUrl,
    model: 'scripted-1',
    usdPerMTokIn: 2,
    usdPerMTokOut: 10,
    timeoutMs: 5_000,
  });

export function turnFor(deliveryKey: string, replies: Message[] = []): StageTurn {
  return {
    agentId: 'scripted-1',
    edge: undefined,
    conversation: async () => [],
    prompt: async ({ question }) => ({
      messages: [{ role: 'user', content: question }],
      questionText: question,
      history: [userMessage(question)],
      handover: undefined,
    }),
    reply: (...m) => replies.push(...m),
    deliveryKey,
  };
}

/** A writer to the `wiki` system, holding these tools. */
export const wikiWriter = (tools: ToolGrant[]) =>
  defineStage({
    name: 'publish',
    role: 'writer',
    accepts: ['brief.v1'],
    outputs: ['receipt.v1'],
    criteria: ['posts the brief once'],
    nominalCostUsd: 0.01,
    writes: 'wiki',
    reconcile: 'idempotent',
    tools,
  });

/** The wiki writer's model, step by step: step 1 searches, step 2 posts the note, step 3 answers. */
export function wikiWriterStep(step: number): ScriptedReply {
  if (step === 1) return { toolCalls: [{ id: 'call_1', name: 'search', input: { topic: 'refunds' } }] };
  if (step === 2) return { toolCalls: [{ id: 'call_2', name: 'post_note', input: { text: 'Refunds: 30 days' } }] };
  return { text: JSON.stringify({ posted: true }) };
}
export const wikiWriterScript: ScriptedModel['answer'] = (request) => wikiWriterStep(toolResultsIn(request) + 1);
