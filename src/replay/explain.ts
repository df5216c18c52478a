/**
 * What a failed replay means, in the terms of the history: the SDK's error carries sdk-core's
 * nondeterminism reason as text, which names the code's command and (for most reasons) the
 * history's event. Pure, so every shape of reason is unit-tested.
 */
import type { History } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface ReplayFailure {
  /** `DeterminismViolationError`, or `ReplayError` when the workflow task failed for another reason. */
  error: string;
  /** sdk-core's reason, without the SDK's wrapping. */
  message: string;
  /** The history event the code's commands stopped matching, when the reason names or identifies it. */
  eventId?: number;
  /** That event's type, e.g. `UpsertWorkflowSearchAttributes`. */
  event?: string;
  /** The command the current code issued there, e.g. `StartTimer`; absent when it issued none. */
  command?: string;
  hint: string;
}

/** sdk-core's state machines, by the name its reasons use, and the command each one issues. */
const MACHINE_COMMANDS: Record<string, string> = {
  Timer: 'StartTimer',
  Activity: 'ScheduleActivityTask',
  'Local activity': 'ScheduleLocalActivity',
  'Child workflow': 'StartChildWorkflowExecution',
  'Complete workflow': 'CompleteWorkflowExecution',
  'Fail workflow': 'FailWorkflowExecution',
  'Cancel workflow': 'CancelWorkflowExecution',
  'Continue as new workflow': 'ContinueAsNewWorkflowExecution',
  'Signal external WF': 'SignalExternalWorkflowExecution',
  'Cancel external WF': 'RequestCancelExternalWorkflowExecution',
  Update: 'UpdateResponse',
  Change: 'SetPatchMarker',
  'Nexus operation': 'ScheduleNexusOperation',
  UpsertWorkflowSearchAttributes: 'UpsertWorkflowSearchAttributes',
  ModifyWorkflowProperties: 'ModifyWorkflowProperties',
};

/** `EVENT_TYPE_MARKER_RECORDED` → `MarkerRecorded`, the spelling sdk-core's reasons use. */
export function eventTypeName(type: temporal.api.enums.v1.EventType | null | undefined): string {
  const constant = type == null ? undefined : temporal.api.enums.v1.EventType[type];
  if (!constant) return 'Unspecified';
  return constant
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(?:^|_)([a-z])/g, (_m, c: string) => c.toUpperCase());
}

const at = (event: HistoryEvent | undefined) =>
  event ? { eventId: Number(event.eventId), event: eventTypeName(event.eventType) } : {};

function markerJson(event: HistoryEvent, key: string): Record<string, unknown> | undefined {
  const data = event.markerRecordedEventAttributes?.details?.[key]?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    return JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

const marker = (history: History, name: string, key: string, match: (data: Record<string, unknown>) => boolean) =>
  history.events?.find((e) => e.markerRecordedEventAttributes?.markerName === name && match(markerJson(e, key) ?? {}));

/** The event behind a command id such as `LocalActivity(1)` (sdk-core's sequence numbers). */
function eventForCommand(history: History, kind: string, seq: number): HistoryEvent | undefined {
  const events = history.events ?? [];
  switch (kind) {
    case 'LocalActivity':
      return marker(history, 'core_local_activity', 'data', (d) => d.seq === seq);
    case 'Activity':
      return events.find((e) => e.activityTaskScheduledEventAttributes?.activityId === String(seq));
    case 'Timer':
      return events.find((e) => e.timerStartedEventAttributes?.timerId === String(seq));
    default:
      return undefined;
  }
}

const PATCH = "if (patched('<change-id>')) { new code } else { old code }";

export function explainReplayError(err: Error, history: History): ReplayFailure {
  // The SDK wraps core's reason in a Rust Debug dump of the activation failure.
  const message = /Nondeterminism error: (.*?)", source: /s.exec(err.message)?.[1] ?? err.message;
  const base = { error: err.name, message };
  // A payload the codec could not decrypt (src/codec.ts): the keys, not the code, are what to fix.
  const codec = /message: "(.*?)", source: "TypeScriptSDK", stack_trace: "CodecKeyError: /s.exec(err.message);
  if (codec)
    return {
      error: 'CodecKeyError',
      message: codec[1]!.replace(/\\"/g, '"'),
      hint: 'the history was recorded with payload encryption: replay with the key it names (HANDRAIL_CODEC_KEYS or HANDRAIL_CODEC_KEYS_FILE; docs/codec.md)',
    };
  const named = /HistoryEvent\(id: (\d+), (\w+)\)/.exec(message);
  const event = named ? { eventId: Number(named[1]), event: named[2]! } : {};

  const machine = /^(.+?) ?[Mm]achine (?:does not handle|cannot handle)/.exec(message);
  if (machine && named) {
    const command = MACHINE_COMMANDS[machine[1]!] ?? machine[1]!;
    return {
      ...base,
      ...event,
      command,
      hint: `the code now issues ${command} where the history has ${named[2]}; keep recorded jobs on the old path: ${PATCH}`,
    };
  }
  if (message.startsWith('No command scheduled for event') && named) {
    return {
      ...base,
      ...event,
      hint: `the history has ${named[2]} but the code no longer issues its command; keep the old call for recorded jobs: ${PATCH}`,
    };
  }
  const missing = /^Missing associated machine for (\w+)\((\d+)\)/.exec(message);
  if (missing) {
    return {
      ...base,
      ...at(eventForCommand(history, missing[1]!, Number(missing[2]))),
      hint: `the history has ${missing[1]} #${missing[2]}, which the code no longer schedules there; keep the old call for recorded jobs: ${PATCH}`,
    };
  }
  const patch = /^Non-deprecated patch marker encountered for change (\S+), but/.exec(message);
  if (patch) {
    const id = patch[1]!;
    return {
      ...base,
      ...at(marker(history, 'core_patch', 'patch-data', (d) => d.id === id)),
      hint: `the history took patched('${id}') here and the code no longer calls it first: keep patched('${id}') (or deprecatePatch('${id}')) where it was, and give a new change a patch of its own`,
    };
  }
  const mismatch =
    /^Activity (id|type) of (scheduled event|recorded marker) '(.*)' does not match activity \1 of (local )?activity command '(.*)'$/s.exec(
      message,
    );
  if (mismatch) {
    const [, field, , recorded, local, issued] = mismatch as unknown as [
      string,
      string,
      string,
      string,
      string | undefined,
      string,
    ];
    const command = `${local ? 'ScheduleLocalActivity' : 'ScheduleActivityTask'} ${issued}`;
    // Activity ids are unique in a run; a type is not, so only an id finds the event.
    const found =
      field === 'id' && !local
        ? (history.events ?? []).find((e) => e.activityTaskScheduledEventAttributes?.activityId === recorded)
        : undefined;
    return {
      ...base,
      ...at(found),
      command,
      hint: `the code now schedules ${issued} where the history has ${recorded}; keep recorded jobs on the old path: ${PATCH}`,
    };
  }
  if (err.name === 'DeterminismViolationError') {
    return {
      ...base,
      ...event,
      hint: `the code no longer issues the history's commands in order; keep recorded jobs on the old path: ${PATCH}`,
    };
  }
  return {
    ...base,
    ...event,
    hint: 'the workflow task failed on replay: check that the bundle exports this workflow type and that its code runs without throwing',
  };
}
