/** The job's log is referenced from `package.memory_refs` by `handrail://transcripts/<job_id>/<sha256>`.
 * No zod here: the rail reads these addresses in workflow code. */
const TRANSCRIPT_SCHEME = 'handrail://transcripts/';
export const transcriptUri = (jobId: string, sha: string) => `${TRANSCRIPT_SCHEME}${jobId}/${sha}`;
export const isTranscriptUri = (ref: string) => ref.startsWith(TRANSCRIPT_SCHEME);
/** The log's newest turn sha, when `ref` is job `jobId`'s transcript URI. */
export function transcriptHead(ref: string, jobId: string): string | undefined {
  const prefix = `${TRANSCRIPT_SCHEME}${jobId}/`;
  const head = ref.startsWith(prefix) ? ref.slice(prefix.length) : '';
  return /^[0-9a-f]{64}$/.test(head) ? head : undefined;
}
