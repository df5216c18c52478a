/**
 * The A2A server's pure mapping: task ids from (caller, messageId), who may see a task, what a
 * message may carry, and a job's status as a task state.
 */
import { TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PIPELINES } from '../../../contracts/pipelines';
import { ticketArtifactBodies } from '../../../contracts/pipelines/ticket-artifacts';
import { sampleJobRequest } from '../../../src/devtools/samples/tickets';
import { agentCardOf, entryJsonSchema } from '../../../src/servers/a2a/agent-card';
import {
  A2A_PART_MAX_BYTES,
  dataOf,
  decisionOf,
  jobRequestOf,
  mayAccess,
  taskIdOf,
} from '../../../src/servers/a2a/task-messages';
import { taskStateOf } from '../../../src/servers/a2a/task-view';
import { userMessage } from '../../helpers/a2a-messages';

const ana = { name: 'ana', role: 'user' } as const;
const bob = { name: 'bob', role: 'user' } as const;
const ops = { name: 'ops', role: 'root' } as const;

const message = (data: unknown, messageId = 'm-1') => userMessage(data, { messageId });

const { job_id: _id, ...sample } = sampleJobRequest('unused');
const request = { pipeline: 'ticket-triage', ...sample };

describe('A2A task ids', () => {
  it('are one per (caller, messageId): the same message is the same job, another caller another', () => {
    expect(taskIdOf(ana, 'm-1')).toBe(taskIdOf(ana, 'm-1'));
    expect(taskIdOf(ana, 'm-1')).not.toBe(taskIdOf(ana, 'm-2'));
    expect(taskIdOf(ana, 'm-1')).not.toBe(taskIdOf(bob, 'm-1'));
    expect(taskIdOf(ana, 'x'.repeat(128))).toMatch(/^a2a-[0-9a-f]{24}-[0-9a-f]{24}$/);
  });

  it('are seen by their caller and root only; a job not started over A2A only by root', () => {
    const id = taskIdOf(ana, 'm-1');
    expect(mayAccess(ana, id)).toBe(true);
    expect(mayAccess(bob, id)).toBe(false);
    expect(mayAccess(ops, id)).toBe(true);
    expect(mayAccess(ana, 'tkt_18422')).toBe(false);
    expect(mayAccess(ops, 'x'.repeat(129))).toBe(false);
    expect(mayAccess(ops, 'a b')).toBe(false);
  });
});

describe('A2A messages', () => {
  it('start the job their data part asks for, owned by the caller, under the derived id', () => {
    const { message: m, data } = dataOf(message(request));
    const job = jobRequestOf(ana, m, data, BUILT_IN_PIPELINES);
    expect(job).toMatchObject({ job_id: taskIdOf(ana, 'm-1'), owner: 'ana', pipeline: 'ticket-triage' });
  });

  it('refuse what the server sets, unknown skills, bad entries, oversized parts, and no data part', () => {
    const start = (data: unknown) => {
      const { message: m, data: d } = dataOf(message(data));
      return jobRequestOf(ana, m, d, BUILT_IN_PIPELINES);
    };
    expect(() => start({ ...request, job_id: 'mine' })).toThrow(/job_id/);
    expect(() => start({ ...request, owner: 'bob' })).toThrow(/owner/);
    expect(() => start({ ...request, pipeline: 'nope' })).toThrow(/unknown skill/);
    expect(() => start({ ...request, ticket: { subject: 1 } })).toThrow(/ticket/);
    expect(() => start({ ...request, goal: 'x'.repeat(A2A_PART_MAX_BYTES) })).toThrow(/bytes/);
    expect(() => dataOf({ ...message(request), parts: [] })).toThrow(/exactly one data part/);
    expect(() => dataOf(message(request, ''))).toThrow(/messageId/);
  });

  it('carry a decision whose actor is always the caller', () => {
    expect(decisionOf(ana, { action: 'approve' })).toEqual({ action: 'approve', actor: 'ana' });
    expect(() => decisionOf(ana, { action: 'approve', actor: 'bob' })).toThrow(/actor/);
    expect(() => decisionOf(ana, { note: 'no action' })).toThrow(/action/);
  });
});

describe('A2A task states', () => {
  it('follow the rail: an escalation waits for input while the run is open, fails once it closed', () => {
    expect(taskStateOf('running', 'RUNNING')).toBe(TaskState.TASK_STATE_WORKING);
    expect(taskStateOf('escalated', 'RUNNING')).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(taskStateOf('escalated', 'COMPLETED')).toBe(TaskState.TASK_STATE_FAILED);
    expect(taskStateOf('completed', 'COMPLETED')).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(taskStateOf('rejected', 'COMPLETED')).toBe(TaskState.TASK_STATE_REJECTED);
    expect(taskStateOf('cancelled', 'COMPLETED')).toBe(TaskState.TASK_STATE_CANCELED);
    expect(taskStateOf('terminated', 'TERMINATED')).toBe(TaskState.TASK_STATE_FAILED);
  });
});

describe('A2A agent card', () => {
  it("lists each pipeline as a skill, and each entry's JSON Schema from its zod schema", () => {
    const card = agentCardOf({
      pipelines: BUILT_IN_PIPELINES,
      baseUrl: 'http://h:1',
      entrySchemas: ticketArtifactBodies,
    });
    expect(card.skills.map((s) => s.id)).toEqual(BUILT_IN_PIPELINES.map((p) => p.name));
    expect(card.supportedInterfaces[0]!.url).toBe('http://h:1/a2a');
    expect(entryJsonSchema(BUILT_IN_PIPELINES[0]!, ticketArtifactBodies)).toMatchObject({ type: 'object' });
    // A precompiled validator with no zod schema given: anything (the rail checks the entry).
    expect(entryJsonSchema(BUILT_IN_PIPELINES[0]!)).toEqual({});
  });
});
