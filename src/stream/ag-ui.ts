/**
 * A job's stream as AG-UI events (`@ag-ui/core`), one connection at a time: the job is the run
 * (its id the thread and run ids), each hop a step, a model stage's text a message, the rail's
 * acks, decisions and escalations CUSTOM events named `handrail.*`, the job's public state a
 * STATE_SNAPSHOT. An event of the job's stream keeps its id; what a connection adds so the
 * protocol holds for a follower that joined late (the run's start, a step or message opened
 * before the follower's id, their closing) carries none, so a resumed follower is sent it again
 * and the ids it resumes from only grow.
 */
import { EventType, type BaseEvent } from '@ag-ui/core';
import type { FollowItem } from './follow';
import type { JobEvent } from './events';

/** An AG-UI event and, when it is one of the job's stream, its id. */
export interface AgUiOut {
  id?: number;
  event: BaseEvent;
}

/** Statuses Temporal ended the run with, past the rail: a RUN_ERROR. */
const ENDED_OUTSIDE_RAIL = new Set(['terminated', 'timed_out', 'failed', 'canceled']);

export class AgUiConnection {
  private readonly steps = new Map<number, string>();
  private readonly messages = new Map<number, string>();
  /** Messages a hop's text was split into so far (a tool call closes one). */
  private readonly segments = new Map<number, number>();
  /** Tool calls started on this connection, by their AG-UI id. */
  private readonly calls = new Set<string>();

  constructor(private readonly jobId: string) {}

  /** What every connection opens with. */
  opening(): AgUiOut[] {
    return [{ event: { type: EventType.RUN_STARTED, threadId: this.jobId, runId: this.jobId } as BaseEvent }];
  }

  translate(item: FollowItem): AgUiOut[] {
    if (item.kind === 'state')
      return [{ event: { type: EventType.STATE_SNAPSHOT, snapshot: item.state } as BaseEvent }];
    return this.event(item.event);
  }

  /** A typed CUSTOM event the server sends itself (not numbered), e.g. `handrail.stream_lagged`. */
  custom(name: string, value: unknown): AgUiOut {
    return { event: { type: EventType.CUSTOM, name: `handrail.${name}`, value } as BaseEvent };
  }

  private event(e: JobEvent): AgUiOut[] {
    const id = e.id;
    switch (e.type) {
      case 'job_started':
        return [{ id, ...this.custom('job_started', { job_id: e.job_id }) }];
      case 'hop_started':
        return [{ id, event: this.openStep(e.hop, e.stage) }];
      case 'ack':
        return [{ id, ...this.custom('ack', e.ack) }];
      case 'decision':
        return [{ id, ...this.custom('decision', e.ack) }];
      case 'escalated':
        return [{ id, ...this.custom('escalation', e.escalation) }];
      case 'job_continued':
        return [{ id, ...this.custom('continued', { run: e.run }) }];
      case 'text_delta': {
        if (e.delta.length === 0) return [];
        const opened = this.openMessage(e.hop);
        return [
          ...opened,
          {
            id,
            event: {
              type: EventType.TEXT_MESSAGE_CONTENT,
              messageId: this.messages.get(e.hop)!,
              delta: e.delta,
            } as BaseEvent,
          },
        ];
      }
      case 'tool_call':
        return this.toolCall(e);
      case 'hop_finished': {
        const out = [...this.closeMessage(e.hop)];
        if (!this.steps.has(e.hop)) out.push({ event: this.openStep(e.hop, e.stage) });
        const stepName = this.steps.get(e.hop)!;
        this.steps.delete(e.hop);
        out.push({ id, event: { type: EventType.STEP_FINISHED, stepName } as BaseEvent });
        return out;
      }
      case 'job_finished': {
        const out = this.closeAll();
        const ending = ENDED_OUTSIDE_RAIL.has(e.status)
          ? ({ type: EventType.RUN_ERROR, message: `the job's run ended ${e.status}`, code: e.status } as BaseEvent)
          : ({
              type: EventType.RUN_FINISHED,
              threadId: this.jobId,
              runId: this.jobId,
              result: { status: e.status, ...(e.reason ? { reason: e.reason } : {}) },
            } as BaseEvent);
        return [...out, { id, event: ending }];
      }
    }
  }

  /** A call's start: the hop's text so far closes, the call opens, shows its arguments when they
   * may be shown, and ends (the model asked for it whole); its end is the call's result. */
  private toolCall(e: Extract<JobEvent, { type: 'tool_call' }>): AgUiOut[] {
    const toolCallId = `${this.jobId}/hop/${e.hop}/call/${e.call_id}`;
    if (e.phase === 'start') {
      this.calls.add(toolCallId);
      return [
        ...this.closeMessage(e.hop),
        { id: e.id, event: { type: EventType.TOOL_CALL_START, toolCallId, toolCallName: e.name } as BaseEvent },
        ...(e.args !== undefined
          ? [{ event: { type: EventType.TOOL_CALL_ARGS, toolCallId, delta: JSON.stringify(e.args) } as BaseEvent }]
          : []),
        { event: { type: EventType.TOOL_CALL_END, toolCallId } as BaseEvent },
      ];
    }
    const outcome = { ok: e.ok ?? false };
    // A call this connection did not see start (it began before the follower's id) has no place
    // in AG-UI's message list: its outcome goes as a CUSTOM event.
    if (!this.calls.has(toolCallId))
      return [{ id: e.id, ...this.custom('tool_result', { tool_call_id: toolCallId, name: e.name, ...outcome }) }];
    return [
      {
        id: e.id,
        event: {
          type: EventType.TOOL_CALL_RESULT,
          messageId: `${toolCallId}/result`,
          toolCallId,
          content: JSON.stringify(outcome),
        } as BaseEvent,
      },
    ];
  }

  private openStep(hop: number, stage: string): BaseEvent {
    const stepName = `hop ${hop}: ${stage}`;
    this.steps.set(hop, stepName);
    return { type: EventType.STEP_STARTED, stepName } as BaseEvent;
  }

  private openMessage(hop: number): AgUiOut[] {
    if (this.messages.has(hop)) return [];
    const segment = (this.segments.get(hop) ?? 0) + 1;
    this.segments.set(hop, segment);
    const messageId = `${this.jobId}/hop/${hop}${segment > 1 ? `/${segment}` : ''}`;
    this.messages.set(hop, messageId);
    return [{ event: { type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' } as BaseEvent }];
  }

  private closeMessage(hop: number): AgUiOut[] {
    const messageId = this.messages.get(hop);
    if (!messageId) return [];
    this.messages.delete(hop);
    return [{ event: { type: EventType.TEXT_MESSAGE_END, messageId } as BaseEvent }];
  }

  private closeAll(): AgUiOut[] {
    const out = [...this.messages.keys()].flatMap((hop) => this.closeMessage(hop));
    for (const stepName of this.steps.values())
      out.push({ event: { type: EventType.STEP_FINISHED, stepName } as BaseEvent });
    this.steps.clear();
    return out;
  }
}
