/**
 * What an A2A caller's message asks of handrail: a job to start (the first message of a task) or
 * a decision for a job waiting on a human (a message naming its task). Both travel as one `data`
 * part; the caller never picks the job id or the actor, the server derives them from who called.
 *
 * Task ids are job ids of the form `a2a-<caller>-<message>`: `<caller>` is a digest of the caller's
 * user name, `<message>` a digest of (caller, messageId). The same message from the same caller is
 * always the same job id, so a retried or concurrent send reaches the job the first one started
 * (the rail never starts a second job under an id), and a task id says whose it is without a lookup.
 */
import crypto from 'node:crypto';
import type { Message, Part } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { z } from 'zod';
import { LIMITS } from '../../../contracts/limits';
import { isId } from '../../../contracts/names';
import type { Pipeline } from '../../../contracts';
import { InvalidJobRequestError, parseJobRequest } from '../../operator/client';
import type { JobRequest } from '../../../contracts';
import type { ApiUser } from '../api-users';

/** The A2A message id is the caller's idempotency key: bounded like any id the rail keeps. */
const MESSAGE_ID_MAX = LIMITS.id;

/** A data part over this many UTF-8 bytes of JSON is refused before anything is parsed further:
 * no job request or decision comes near it (a package is capped at LIMITS.packageBytes). */
export const A2A_PART_MAX_BYTES = LIMITS.packageBytes;

const digest = (...parts: string[]) =>
  crypto.createHash('sha256').update(parts.join('\u0000'), 'utf8').digest('hex').slice(0, 24);

/** The prefix of every task id a caller's messages start. */
export const callerTaskPrefix = (user: ApiUser) => `a2a-${digest('caller', user.name)}-`;

/** The job id a caller's message starts (or started). */
export const taskIdOf = (user: ApiUser, messageId: string) =>
  `${callerTaskPrefix(user)}${digest(user.name, messageId)}`;

/** Root sees every job; anyone else the tasks their own messages started. An id no job can have
 * is nobody's (it is never sent to Temporal). */
export const mayAccess = (user: ApiUser, taskId: string) =>
  isId(taskId) && (user.role === 'root' || taskId.startsWith(callerTaskPrefix(user)));

/** The Temporal update id of a caller's decision message: a retried message is the same update. */
export const decisionUpdateId = (user: ApiUser, messageId: string) => `a2a/${user.name}/${digest(messageId)}`;

const malformed = (message: string) => new RequestMalformedError(message);

/** The message's one `data` part, size-checked; text parts are allowed beside it and ignored. */
export function dataOf(message: Message | undefined): { message: Message; data: Record<string, unknown> } {
  if (!message) throw malformed('params.message is required');
  if (!message.messageId) throw malformed('message.messageId is required: it makes the request idempotent');
  if (message.messageId.length > MESSAGE_ID_MAX)
    throw malformed(`message.messageId is longer than ${MESSAGE_ID_MAX} characters`);
  const data = message.parts.filter((p): p is Part & { content: { $case: 'data' } } => p.content?.$case === 'data');
  for (const part of message.parts) {
    const bytes = Buffer.byteLength(JSON.stringify(part.content?.value ?? null), 'utf8');
    if (bytes > A2A_PART_MAX_BYTES)
      throw malformed(`a message part is ${bytes} bytes; at most ${A2A_PART_MAX_BYTES} are accepted`);
  }
  if (data.length !== 1)
    throw malformed(`the message needs exactly one data part (a job request, or a decision), not ${data.length}`);
  const value: unknown = data[0]!.content.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw malformed('the data part must be a JSON object');
  return { message, data: value as Record<string, unknown> };
}

/** Fields of a job request the server sets itself. */
const SERVER_FIELDS = ['job_id', 'owner'] as const;

/** The job a first message starts: its data part is a job request without `job_id` and `owner`
 * (the skill is its `pipeline`), checked against the pipeline's entry schema before anything starts. */
export function jobRequestOf(
  user: ApiUser,
  message: Message,
  data: Record<string, unknown>,
  pipelines: readonly Pipeline[],
): JobRequest {
  for (const field of SERVER_FIELDS)
    if (field in data) throw malformed(`the job request may not set ${field}: the server sets it`);
  const skill = data.pipeline;
  if (typeof skill !== 'string') throw malformed('the job request needs `pipeline`: the id of one of the skills');
  if (!pipelines.some((p) => p.name === skill))
    throw malformed(`unknown skill ${JSON.stringify(skill)}; skills: ${pipelines.map((p) => p.name).join(', ')}`);
  try {
    return parseJobRequest({ ...data, job_id: taskIdOf(user, message.messageId), owner: user.name }, pipelines);
  } catch (error) {
    if (error instanceof InvalidJobRequestError)
      throw new RequestMalformedError({
        message: error.message,
        metadata: { issues: JSON.stringify(error.issues) },
      });
    throw error;
  }
}

/** A decision message's data: the `decide` update's fields but the actor (always the caller). */
const DecisionData = z.looseObject({ action: z.string() });

export function decisionOf(user: ApiUser, data: Record<string, unknown>): Record<string, unknown> {
  const parsed = DecisionData.safeParse(data);
  if (!parsed.success) throw malformed('a message to a task waiting for input carries a decision: {"action": ...}');
  if ('actor' in data) throw malformed('the decision may not set actor: it is the authenticated caller');
  if ('handoff_record' in data) throw malformed('the decision may not name a handoff record');
  return { ...data, actor: user.name };
}
