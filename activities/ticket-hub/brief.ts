/**
 * brief: `context.v1` (or the judge's failing `verdict.v1`, for a revision) → `summary_md`. The
 * draft stage's summary, written from the specialists' artifacts the merge lists, with one line
 * on the customer's earlier tickets.
 */
import { MergedBranches, type HandoffV1 } from '../../contracts';
import { AccountHistoryV1 } from '../../contracts/pipelines/ticket-artifacts';
import { ACCOUNT_HISTORY, CONTEXT, briefStage } from '../../contracts/pipelines/ticket-hub';
import {
  type ChatModel,
  type Store,
  readArtifactBody,
  requireArtifact,
  type StageOutput,
  type StageTurn,
} from '../../src';
import { writeSummary } from '../ticket-triage/draft';
import { readIntake, readRetrieval } from '../ticket-triage/retrieval';

/** Earlier tickets named in the summary's line; the artifact lists them all. */
const NAMED_TICKETS = 5;

export async function runBrief(
  store: Store,
  model: ChatModel | undefined,
  pkg: HandoffV1,
  turn: StageTurn,
): Promise<StageOutput> {
  const intake = await readIntake(store, pkg, briefStage.name);
  // A revision's newest artifact is the verdict; the merge it revises from is still on the package.
  const merged = await readArtifactBody(store, requireArtifact(pkg, briefStage.name, CONTEXT), MergedBranches);
  const research = { artifacts: merged.branches.map((b) => b.artifact) };
  const retrieval = await readRetrieval(store, research, briefStage.name);
  const history = await readArtifactBody(
    store,
    requireArtifact(research, briefStage.name, ACCOUNT_HISTORY),
    AccountHistoryV1,
  );
  return writeSummary(store, model, briefStage, pkg, turn, { intake, retrieval, context: [historyLine(history)] });
}

/** One line on the customer's earlier tickets: ids, statuses and dates only, so it cites nothing
 * and quotes no earlier note (which cites chunks of other jobs). */
export function historyLine(history: AccountHistoryV1): string {
  if (history.count === 0) return `**Account:** customer ${history.customer_id} has no earlier tickets.`;
  const named = history.tickets
    .slice(0, NAMED_TICKETS)
    .map((t) => `${t.ticket_id} (${t.status}, ${t.updated_at.slice(0, 10)})`);
  const unnamed = history.more || history.tickets.length > named.length ? ', …' : '';
  const plural = history.count === 1 && !history.more ? 'ticket' : 'tickets';
  // Brackets are citations to the judge: a model's pattern line must not look like one.
  const pattern = history.pattern ? ` ${history.pattern.replace(/[[\]]/g, '')}` : '';
  return `**Account:** customer ${history.customer_id} has ${history.more ? `more than ${history.count}` : history.count} earlier ${plural}: ${named.join(', ')}${unnamed}.${pattern}`;
}
