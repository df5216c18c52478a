import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributeUpdatePair } from '@temporalio/common';
// Lives with the workflows because the rail upserts them; client, CLI and dev server import it too.

// Public names, kept stable: operators filter on these in the Web UI and `handrail list`.
export const HandrailStage = defineSearchAttributeKey('HandrailStage', SearchAttributeType.KEYWORD);
export const HandrailAck = defineSearchAttributeKey('HandrailAck', SearchAttributeType.KEYWORD);
export const HandrailVerdict = defineSearchAttributeKey('HandrailVerdict', SearchAttributeType.KEYWORD);
export const HandrailStatus = defineSearchAttributeKey('HandrailStatus', SearchAttributeType.KEYWORD);
export const HandrailHops = defineSearchAttributeKey('HandrailHops', SearchAttributeType.INT);
export const HandrailUsdRemaining = defineSearchAttributeKey('HandrailUsdRemaining', SearchAttributeType.DOUBLE);
/** Every ack kind the job has seen (HandrailAck is only the newest): `HandrailAcks = "rejected_budget"`
 * finds a job refused for money even while it waits at the human hop, whose ack is `accepted`.
 * Beside them, `in_doubt` once a writer's write of the job was in doubt, and `tool_approval` while
 * a tool call waits for a human. */
export const HandrailAcks = defineSearchAttributeKey('HandrailAcks', SearchAttributeType.KEYWORD_LIST);
/** The pipeline a job runs (contracts/pipeline.ts). */
export const HandrailPipeline = defineSearchAttributeKey('HandrailPipeline', SearchAttributeType.KEYWORD);
/** The job a fork was started from (`forkJob`); absent on every other job. Set at the start,
 * never upserted: `HandrailForkOf = "job-1"` lists job-1's forks. */
export const HandrailForkOf = defineSearchAttributeKey('HandrailForkOf', SearchAttributeType.KEYWORD);

/** Name → type as the dev server's `--search-attribute` flag and the operator API spell it. */
export const SEARCH_ATTRIBUTES = {
  HandrailStage: 'Keyword',
  HandrailAck: 'Keyword',
  HandrailVerdict: 'Keyword',
  HandrailStatus: 'Keyword',
  HandrailHops: 'Int',
  HandrailUsdRemaining: 'Double',
  HandrailPipeline: 'Keyword',
  HandrailAcks: 'KeywordList',
  HandrailForkOf: 'Keyword',
} as const;

/** What a job shows in visibility, one field per attribute above. */
export interface JobAttributes {
  status: string;
  stage: string;
  ack: string;
  verdict: string;
  hops: number;
  usdRemaining: number;
  pipeline: string;
  acks: readonly string[];
}

/** The attributes for what a job shows, as the rail upserts them (and `startJob` sets them at start). */
export function jobSearchAttributes(a: JobAttributes): SearchAttributeUpdatePair[] {
  return [
    { key: HandrailStatus, value: a.status },
    { key: HandrailStage, value: a.stage },
    { key: HandrailAck, value: a.ack },
    { key: HandrailVerdict, value: a.verdict },
    { key: HandrailHops, value: a.hops },
    { key: HandrailUsdRemaining, value: a.usdRemaining },
    { key: HandrailPipeline, value: a.pipeline },
    { key: HandrailAcks, value: [...a.acks] },
  ];
}
