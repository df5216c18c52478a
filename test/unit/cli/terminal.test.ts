/** What the CLI does only on a terminal: the live line and colour. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isTty, liveLine, paintFor, plain } from '../../../src/operator/cli/terminal';

/** A stream that records what was written, as a terminal or not. */
function capture(tty: boolean) {
  const stream = Object.assign(new PassThrough(), tty ? { isTTY: true } : {});
  let written = '';
  stream.on('data', (chunk: Buffer) => (written += chunk.toString()));
  return { stream, written: () => written };
}

describe('liveLine', () => {
  it('on a terminal: redrawn in place, cleared before a printed line and at the end', () => {
    const out = capture(true);
    const live = liveLine(out.stream, isTty(out.stream));
    live.show('… 1 of 3');
    live.show('… 2 of 3');
    live.print('same  a.json');
    live.show('… 3 of 3');
    live.clear();
    expect(out.written()).toBe('… 1 of 3\r\x1b[2K… 2 of 3\r\x1b[2Ksame  a.json\n… 3 of 3\r\x1b[2K');
  });

  it('on a pipe: only the printed lines, nothing to clear', () => {
    const out = capture(false);
    const live = liveLine(out.stream, isTty(out.stream));
    live.show('… 1 of 3');
    live.print('same  a.json');
    live.clear();
    expect(out.written()).toBe('same  a.json\n');
  });
});

describe('paintFor', () => {
  it('colours ack states on a terminal, not on a pipe, and not with NO_COLOR set', () => {
    const tty = capture(true).stream;
    expect(paintFor(tty, {})('accepted', 'accepted')).toBe('\x1b[32maccepted\x1b[39m');
    expect(paintFor(tty, {})('rejected_budget', 'rejected_budget')).toBe('\x1b[31mrejected_budget\x1b[39m');
    expect(paintFor(tty, {})('running', 'running')).toBe('running');
    expect(paintFor(tty, { NO_COLOR: '1' })).toBe(plain);
    expect(paintFor(capture(false).stream, {})).toBe(plain);
  });
});
