/**
 * The frames of a job's SSE stream as they arrive (the tests' and bench:stream's one reader): each
 * frame's `data:` parsed as JSON, with its `id:` when it has one and the time it arrived.
 */
export interface SseFrame<E> {
  id?: number;
  event: E;
  /** When the chunk that completed it arrived (ms since the epoch). */
  at: number;
}

export async function* sseFrames<E>(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseFrame<E>> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    const at = Date.now();
    buffered += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffered.indexOf('\n\n')) >= 0) {
      const text = buffered.slice(0, cut);
      buffered = buffered.slice(cut + 2);
      const data = /^data: (.*)$/m.exec(text)?.[1];
      if (data === undefined) continue;
      const id = /^id: (\d+)$/m.exec(text)?.[1];
      yield { ...(id ? { id: Number(id) } : {}), event: JSON.parse(data) as E, at };
    }
  }
}
