/**
 * A failed replay, explained: every shape of sdk-core reason the rail's histories can meet names
 * the code's command and the history's event (found in the history when the reason only implies
 * it), and history files load whichever way their enums are spelled.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { ReplayError } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { HISTORIES_DIR, historyFile } from '../../../scripts/replay/histories';
import { replayLine, replaySummary } from '../../../src/operator/cli/format';
import { explainReplayError, readHistoryFile, withEnumNames, type ReplayOutcome } from '../../../src/replay';

const enums = temporal.api.enums.v1;
const happyPath = readHistoryFile(historyFile('happy-path'));
// A history from when the rail still ran a local activity (the known problem, docs/replay.md).
const localActivityHop = readHistoryFile(
  path.join(HISTORIES_DIR, 'known-problems', 'query-during-local-activity.json'),
);

/** The happy path as a run that took `patched(id)` in its first workflow task would have it: the
 * marker as event 5 (the 1.0 rail asks no patch, so no recorded history has one). */
function withPatchMarker(history: typeof happyPath, id: string): typeof happyPath {
  const events = history.events ?? [];
  const data = Buffer.from(JSON.stringify({ id, deprecated: false }));
  const event = temporal.api.history.v1.HistoryEvent;
  const marker = event.fromObject({
    eventId: 5,
    eventType: enums.EventType.EVENT_TYPE_MARKER_RECORDED,
    markerRecordedEventAttributes: { markerName: 'core_patch', details: { 'patch-data': { payloads: [{ data }] } } },
  });
  return {
    events: [
      ...events.slice(0, 4),
      marker,
      ...events
        .slice(4)
        .map((e) => event.fromObject({ ...event.toObject(event.fromObject(e)), eventId: Number(e.eventId) + 1 })),
    ],
  };
}

/** What the SDK throws: core's reason wrapped in a Debug dump of the activation failure (SDK 1.24). */
const violation = (reason: string) =>
  new DeterminismViolationError(
    'Replay failed with a nondeterminism error. This means that the workflow code as written is not compatible with the history that was fed in. ' +
      `Details: Workflow activation completion failed: Failure { failure: Some(Failure { message: "[TMPRL1100] Nondeterminism error: ${reason}", source: "", stack_trace: "", encoded_attributes: None, cause: None }), force_cause: NonDeterministicError }`,
  );

describe('explainReplayError', () => {
  it('a payload the codec cannot decrypt: the key it needs, not a determinism hint (the SDK 1.24 wrapping)', () => {
    const why =
      'payload encrypted with key \\"k2026-06\\", but no codec keys are configured: add key \\"k2026-06\\" to HANDRAIL_CODEC_KEYS or HANDRAIL_CODEC_KEYS_FILE (docs/codec.md)';
    const err = new ReplayError(
      `Replay failed due workflow task failure. Details: Workflow activation completion failed: Failure { failure: Some(Failure { message: "${why}", source: "TypeScriptSDK", stack_trace: "CodecKeyError: ${why}\\n    at AesGcmCodec.decode", encoded_attributes: None, cause: None, failure_info: None }), force_cause: Unspecified }`,
    );
    expect(explainReplayError(err, happyPath)).toEqual({
      error: 'CodecKeyError',
      message:
        'payload encrypted with key "k2026-06", but no codec keys are configured: add key "k2026-06" to HANDRAIL_CODEC_KEYS or HANDRAIL_CODEC_KEYS_FILE (docs/codec.md)',
      hint: expect.stringContaining('replay with the key it names'),
    });
  });

  it('a machine that meets another event: the command the code issued, the event id and type', () => {
    expect(
      explainReplayError(
        violation('Timer machine does not handle this event: HistoryEvent(id: 46, WorkflowExecutionCompleted)'),
        happyPath,
      ),
    ).toEqual({
      error: 'DeterminismViolationError',
      message: 'Timer machine does not handle this event: HistoryEvent(id: 46, WorkflowExecutionCompleted)',
      eventId: 46,
      event: 'WorkflowExecutionCompleted',
      command: 'StartTimer',
      hint: expect.stringMatching(
        /^the code now issues StartTimer where the history has WorkflowExecutionCompleted; .*patched\('<change-id>'\)/,
      ),
    });
  });

  it('an event the code no longer issues a command for: the event, and no command', () => {
    const failure = explainReplayError(
      violation('No command scheduled for event HistoryEvent(id: 10, ActivityTaskScheduled)'),
      happyPath,
    );
    expect(failure).toMatchObject({ eventId: 10, event: 'ActivityTaskScheduled' });
    expect(failure).not.toHaveProperty('command');
  });

  it('a patch marker the code no longer calls patched() for: found in the history by its change id', () => {
    expect(
      explainReplayError(
        violation(
          'Non-deprecated patch marker encountered for change extra-step, but there is no corresponding change command!',
        ),
        withPatchMarker(happyPath, 'extra-step'),
      ),
    ).toMatchObject({
      eventId: 5,
      event: 'MarkerRecorded',
      hint: expect.stringContaining("keep patched('extra-step')"),
    });
  });

  it('a local activity the code no longer schedules: found by its sequence number in the marker', () => {
    expect(
      explainReplayError(violation('Missing associated machine for LocalActivity(1)'), localActivityHop),
    ).toMatchObject({ eventId: 6, event: 'MarkerRecorded' });
  });

  it('another activity in the same slot: the new activity is the command; an id finds the event, a type cannot', () => {
    expect(
      explainReplayError(
        violation(
          "Activity type of scheduled event 'retrieve' does not match activity type of activity command 'notify'",
        ),
        happyPath,
      ),
    ).toEqual(
      expect.objectContaining({
        command: 'ScheduleActivityTask notify',
        hint: expect.stringContaining('schedules notify where the history has retrieve'),
      }),
    );
    expect(
      explainReplayError(
        violation(
          "Activity type of scheduled event 'retrieve' does not match activity type of activity command 'notify'",
        ),
        happyPath,
      ),
    ).not.toHaveProperty('eventId');
    expect(
      explainReplayError(
        violation("Activity id of scheduled event '2' does not match activity id of activity command '1'"),
        happyPath,
      ),
    ).toMatchObject({ eventId: 12, event: 'ActivityTaskScheduled', command: 'ScheduleActivityTask 1' });
  });

  it('a replay error that is no determinism failure keeps the SDK message and a hint about the bundle', () => {
    expect(
      explainReplayError(
        new ReplayError('Replay failed due workflow task failure. Details: no such workflow type'),
        happyPath,
      ),
    ).toEqual({
      error: 'ReplayError',
      message: 'Replay failed due workflow task failure. Details: no such workflow type',
      hint: expect.stringContaining('exports this workflow type'),
    });
  });
});

describe('history files in every exported form', () => {
  const recorded = JSON.parse(fs.readFileSync(historyFile('happy-path'), 'utf8')) as {
    events: Record<string, unknown>[];
  };
  const numeric = {
    events: recorded.events.map((e) => {
      const key = Object.keys(e).find((k) => k.endsWith('EventAttributes'))!;
      const attrs = e[key] as { taskQueue?: { kind: string } };
      const number = (names: object, name: string) => (names as Record<string, number>)[name];
      const kind = attrs.taskQueue && { ...attrs.taskQueue, kind: number(enums.TaskQueueKind, attrs.taskQueue.kind) };
      return {
        ...e,
        eventId: Number(e.eventId),
        eventType: number(enums.EventType, e.eventType as string),
        [key]: kind ? { ...attrs, taskQueue: kind } : attrs,
      };
    }),
  };

  it('proto-JSON enums as numbers (eventType 1, taskQueue.kind 1) read as the recorder spelling; the SDK alone throws on them', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-history-')), 'numeric-enums.json');
    fs.writeFileSync(file, JSON.stringify(numeric));
    expect(() => historyFromJSON(numeric)).toThrow(/startsWith is not a function/);
    expect(readHistoryFile(file)).toEqual(happyPath);
    expect(numeric.events[0]).toMatchObject({
      eventId: 1,
      eventType: 1,
      workflowExecutionStartedEventAttributes: { taskQueue: { kind: 1 } },
    });
    expect((withEnumNames(numeric) as typeof recorded).events[0]).toMatchObject({
      eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
    });
  });

  it('leaves a file that is not a history for the loader to refuse', () => {
    expect(withEnumNames([1, 2])).toEqual([1, 2]);
    expect(withEnumNames({ job_id: 'x' })).toEqual({ job_id: 'x' });
  });
});

describe('replay output', () => {
  const failed: ReplayOutcome = {
    history: 'test/histories/happy-path.json',
    workflowId: 'rec-happy-path',
    ok: false,
    ...explainReplayError(
      violation('Timer machine does not handle this event: HistoryEvent(id: 46, WorkflowExecutionCompleted)'),
      happyPath,
    ),
  };

  it('a line per history: pass, or the command and event with the reason and a hint', () => {
    expect(replayLine({ history: 'rec-1', workflowId: 'rec-1', ok: true })).toBe('pass  rec-1');
    expect(replayLine(failed).split('\n')).toEqual([
      'FAIL  test/histories/happy-path.json (rec-happy-path): the code issues StartTimer at event 46 (WorkflowExecutionCompleted)',
      '      DeterminismViolationError: Timer machine does not handle this event: HistoryEvent(id: 46, WorkflowExecutionCompleted)',
      expect.stringMatching(/^ {6}hint: the code now issues StartTimer/),
    ]);
    expect(replaySummary([failed, { history: 'a', workflowId: 'a', ok: true }])).toBe(
      'replayed 2 histories: 1 passed, 1 failed',
    );
  });
});
