/**
 * What a job shows in visibility: search attributes for filtering (upserted only where they
 * changed) and markdown details for reading. A change is published when the next step (hop,
 * fan-out, merge) starts or the job ends — every change is followed by one in the same workflow
 * task — so once per hop however many changes the hop made.
 */
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { canonicalJson, type AckRecord } from '../../contracts/rail';
import type { JobStatusView } from '../definitions';
import { renderDetails, type HandoverLine } from '../rail/details';
import { HandrailAcks, SEARCH_ATTRIBUTES, jobSearchAttributes, type JobAttributes } from '../search-attributes';

export class Visibility {
  /** The search attributes as visibility has them (last upserted, or set at the start), canonical JSON by key. */
  private readonly published = new Map<string, string>();

  /** What the job was started with counts as published (`startJob` sets the job's first
   * attributes, workflows/rail/first-package.ts `startingAttributes`), so the first hop upserts
   * only what differs — nothing when the client got them right, all of them when a caller set
   * none. An absent list is an empty one: upserting an empty list removes the attribute. Made
   * before the run upserts any. */
  constructor() {
    for (const { key, value } of workflowInfo().typedSearchAttributes.getAll()) {
      if (Object.hasOwn(SEARCH_ATTRIBUTES, key.name)) this.published.set(key.name, canonicalJson(value));
    }
    if (!this.published.has(HandrailAcks.name)) this.published.set(HandrailAcks.name, canonicalJson([]));
  }

  publish(view: JobStatusView, pipeline: string, acks: readonly AckRecord[], handovers: readonly HandoverLine[]): void {
    const attributes = jobSearchAttributes(jobAttributes(view, pipeline, acks));
    const changed = attributes.filter((a) => this.change(a.key.name, canonicalJson(a.value)));
    if (changed.length > 0) upsertSearchAttributes(changed);
    setCurrentDetails(renderDetails(view, acks, handovers));
  }

  /** Records `json` as the key's published value; false when it already was. */
  private change(key: string, json: string): boolean {
    if (this.published.get(key) === json) return false;
    this.published.set(key, json);
    return true;
  }
}

/** What the job shows in visibility for this view of it. */
export function jobAttributes(view: JobStatusView, pipeline: string, acks: readonly AckRecord[]): JobAttributes {
  return {
    status: view.status,
    stage: view.stage,
    ack: view.last_ack?.ack ?? 'none',
    verdict: view.last_verdict,
    hops: view.hops,
    usdRemaining: view.usd_remaining,
    pipeline,
    // `in_doubt` beside the ack kinds once a write of the job was in doubt: the Web UI finds such
    // jobs with `HandrailAcks = "in_doubt"`; `tool_approval` while a tool call waits for a human.
    acks: [
      ...new Set([
        ...Object.keys(view.earlier_acks ?? {}),
        ...acks.map((a) => a.ack),
        ...(acks.some((a) => a.in_doubt) ? ['in_doubt'] : []),
        ...(view.escalation?.tool_call ? ['tool_approval'] : []),
      ]),
    ],
  };
}
