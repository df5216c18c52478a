/**
 * What the CLI and the bench scripts do only on a terminal: a live progress line, redrawn in
 * place and cleared before anything else is printed, and colour. Neither is ever written to a
 * pipe or a file, so piped and `--json` output stay plain.
 */
import { styleText } from 'node:util';
import type { AckState } from '../../../contracts';

export const isTty = (stream: NodeJS.WritableStream): boolean => 'isTTY' in stream && stream.isTTY === true;

/** A line below the output, redrawn in place (`… replayed 12 of 340`). Disabled, it writes nothing. */
export interface LiveLine {
  /** Replaces the live line. */
  show(text: string): void;
  /** Prints a line of output above the live line, which comes back at the next `show`. */
  print(text: string): void;
  /** Removes the live line (before a summary, or when the work ends). */
  clear(): void;
}

export function liveLine(stream: NodeJS.WritableStream, enabled: boolean): LiveLine {
  let shown = false;
  const clear = () => {
    if (shown) stream.write('\r\x1b[2K');
    shown = false;
  };
  return {
    show(text) {
      if (!enabled) return;
      clear();
      stream.write(text);
      shown = true;
    },
    print(text) {
      clear();
      stream.write(`${text}\n`);
    },
    clear,
  };
}

/** Colours a cell by the ack state it shows; `plain` leaves it as it is. */
export type Paint = (text: string, ack: AckState | string) => string;
export const plain: Paint = (text) => text;

/** An ack's colour: green accepted, cyan an answered duplicate, yellow a hop that could not be
 * delivered yet, red a refusal. */
function ackColour(ack: string): Parameters<typeof styleText>[0] | undefined {
  if (ack === 'accepted') return 'green';
  if (ack === 'duplicate') return 'cyan';
  if (ack === 'target_unavailable') return 'yellow';
  return ack.startsWith('rejected_') || ack === 'max_hops_exceeded' || ack === 'cycle_detected' || ack === 'no_progress'
    ? 'red'
    : undefined;
}

const coloured: Paint = (text, ack) => {
  const colour = ackColour(ack);
  // paintFor decided for the CLI's own stream: styleText is not to look at process.stdout again.
  return colour ? styleText(colour, text, { validateStream: false }) : text;
};

/** Colour when `stream` is a terminal and NO_COLOR (https://no-color.org) is unset or empty. */
export function paintFor(stream: NodeJS.WritableStream, env: NodeJS.ProcessEnv): Paint {
  return isTty(stream) && !env.NO_COLOR ? coloured : plain;
}
