/** The job's entry by reference (contracts/entry.ts): the rail's pure sha256 and the store's agree. */
import { describe, expect, it } from 'vitest';
import { inlineText, isStoredEntryOf, parseEntryUri, storedEntry, type Artifact } from '../../../contracts';
import { sha256Hex } from '../../../src/worker/store/content';

const text = JSON.stringify({ id: 'tkt_1', subject: 'Wo ist meine Rückerstattung?', body: 'a,b;c %20 — ✓' });
const inline: Artifact = {
  type: 'ticket.raw',
  uri: `data:application/json,${encodeURIComponent(text)}`,
  schema: 'ticket.raw',
};

describe('the entry by reference', () => {
  it('reads back exactly the inline text, any characters included', () => {
    expect(inlineText(inline)).toBe(text);
    expect(inlineText({ uri: 'data:,plain%20text' })).toBe('plain text');
  });

  it("keeps the inline entry's other fields; takes `;base64` only right before the payload, as the reader does", () => {
    expect(storedEntry('j', { ...inline, note: 'x' }, text)).toMatchObject({ note: 'x', type: 'ticket.raw' });
    expect(inlineText({ uri: 'data:,a;base64,b' })).toBe('a;base64,b');
  });

  it('reads no text from references, base64 payloads or undecodable ones (they stay as they are)', () => {
    expect(inlineText({ uri: 'handrail://artifacts/' + 'a'.repeat(64) })).toBeUndefined();
    expect(inlineText({ uri: `data:text/plain;base64,${Buffer.from('hi').toString('base64')}` })).toBeUndefined();
    expect(inlineText({ uri: 'data:,%E0%A4%A' })).toBeUndefined();
    expect(inlineText(undefined)).toBeUndefined();
  });

  it('addresses the text under its job with the hash the store computes, keeping type and schema', () => {
    const ref = storedEntry('job-1', inline, text);
    expect(parseEntryUri(ref.uri)).toEqual({ jobId: 'job-1', sha: sha256Hex(text) });
    expect(ref).toEqual({ type: 'ticket.raw', uri: ref.uri, schema: 'ticket.raw', hash: `sha256:${sha256Hex(text)}` });
    expect(isStoredEntryOf('job-1', inline, ref)).toBe(true);
    expect(isStoredEntryOf('job-2', inline, ref)).toBe(false);
  });

  it('adds no schema key when the inline entry had none (a stage may re-serialise)', () => {
    const bare: Artifact = { type: 'ticket.raw', uri: 'data:,x' };
    expect(Object.keys(storedEntry('j', bare, 'x')).sort()).toEqual(['hash', 'type', 'uri']);
    expect(isStoredEntryOf('j', bare, JSON.parse(JSON.stringify(storedEntry('j', bare, 'x'))) as Artifact)).toBe(true);
  });
});
