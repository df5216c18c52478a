/**
 * Personal data in prose: email addresses, phone numbers and card numbers, found by shape and
 * masked with fixed tokens (the `redact_personal_data` constraint in constraints.ts). Pure and
 * deterministic: imported by workflow code (the rail's check) and by the stages that mask.
 *
 * Shapes are chosen so that what a note legitimately carries — dates, record and invoice
 * ids (T-1001, INV-2041), money, counts, IP-like and version-like numbers — stays as written.
 * Known gaps: personal data without a recognisable shape (names, street addresses, an unformatted
 * phone number with no "phone"/"tel"… cue before it, a card number that fails the Luhn check),
 * non-ASCII digits, and anything cut in half by a length limit.
 */

export const PERSONAL_DATA_TOKENS = { email: '[email]', card: '[card]', phone: '[phone]' } as const;
export type PersonalDataKind = keyof typeof PERSONAL_DATA_TOKENS;

export interface PersonalDatum {
  kind: PersonalDataKind;
  /** Where it starts in the text, and the text itself. */
  index: number;
  text: string;
}

// The domain ends in letters, not followed by more of a host name: `a@b.co415` is not an email.
const EMAIL = /(?<![\w.%+-])[A-Za-z0-9][\w.%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])/g;

// Runs of digit groups joined by one space or dash, not part of a decimal, an id (`ORD-…`), a
// longer number or a phone number's `+`.
const DIGIT_RUN = /(?<![\w.,/+-])\d+(?:[ -]\d+)*(?![\w/]|[.,]\d)/g;

const PHONE_SHAPES = [
  // International: + country code, then groups; an optional trunk or area code in parentheses.
  /(?<![\w+])\+\d{1,3}(?:[ .-]?\(\d{1,4}\))?(?:[ .-]?\d{1,5}){1,6}/g,
  // North American: (415) 555-0132, 415-555-0132, 415.555.0132, 1 415 555 0132.
  /(?<![\w.,/$€£-])(?:1[ .-])?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}/g,
  // National with a trunk 0: 020 7946 0958, 06 12 34 56 78, (030) 1234567, 0171-1234567.
  /(?<![\w.,/$€£-])(?:\(0\d{1,4}\) ?|0\d{1,4}[ .-])\d{2,8}(?:[ .-]\d{2,8}){0,4}/g,
  // Any number of 7+ digits right after a phone cue: "phone: 4155550132", "call me at 5550132"
  // (not the cue in a `[phone]` token: masking stays idempotent).
  /(?<=(?<!\[)\b(?:phone|tel|telephone|mobile|cell|cellphone|fax|whatsapp|call me|text me|reach me)\b(?:\s*(?:number|no\.?|#))?\s*(?:is|at|on)?\s*[:#]?\s*)\+?\d[\d .()-]{5,}\d/gi,
];
/** E.164 allows at most 15 digits; fewer than 7 is a count, a code or an id, not a phone. */
const PHONE_DIGITS = { min: 7, max: 15 };
/** A whole candidate that is a date: 14.03.2026, 03-14-2026, 2026-03-14. */
const DATE = /^(?:\d{1,2}([./-])\d{1,2}\1(?:\d{4}|\d{2})|\d{4}([./-])\d{1,2}\2\d{1,2})$/;
/** What follows a phone number never continues it: `…0132.5`, `…0132-7`, `…0132x`, `…0132/7`. */
const CONTINUES_NUMBER = /^(?:[.,/:-]\d|\w)/;

const digitCount = (s: string) => s.replace(/\D/g, '').length;

/** The candidate at `index` as a phone number: trailing groups dropped while it has more than 15
 * digits or the text goes on with more of a number (a date or an id written right after it), or
 * null when what is left has too few digits or is a date. */
function fitPhone(text: string, index: number, candidate: string): string | null {
  let phone = candidate;
  while (digitCount(phone) > PHONE_DIGITS.max || CONTINUES_NUMBER.test(text.slice(index + phone.length))) {
    const shorter = phone.replace(/[ .-]*\(?\d+\)?$/, '');
    if (shorter === phone) return null;
    phone = shorter;
  }
  return digitCount(phone) >= PHONE_DIGITS.min && !DATE.test(phone) ? phone : null;
}

/** The Luhn checksum every payment card number satisfies (and 9 in 10 other numbers do not). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * A card-like run: 13–19 digits (in groups joined by single spaces or dashes) that pass Luhn, or
 * a longer run of groups any consecutive 13–19-digit stretch of which does — then the whole run
 * is masked, so a card number followed by another number never leaks by half. Order numbers of
 * that length are masked too when they happen to pass Luhn (1 in 10); a mistyped card is not.
 */
function isCardRun(run: string): boolean {
  const groups = run.split(/[ -]/);
  for (let start = 0; start < groups.length; start++) {
    let digits = '';
    for (let end = start; end < groups.length && digits.length < 19; end++) {
      digits += groups[end];
      if (digits.length >= 13 && digits.length <= 19 && luhnValid(digits)) return true;
    }
  }
  return false;
}

function overlaps(found: readonly PersonalDatum[], index: number, length: number): boolean {
  return found.some((d) => index < d.index + d.text.length && d.index < index + length);
}

/** Every email, card number and phone number in `text`, in reading order, never overlapping
 * (an email first, then a card, then a phone: the digits of an email or a card are not a phone). */
export function findPersonalData(text: string): PersonalDatum[] {
  const found: PersonalDatum[] = [];
  for (const m of text.matchAll(EMAIL)) found.push({ kind: 'email', index: m.index, text: m[0] });
  for (const m of text.matchAll(DIGIT_RUN)) {
    if (!overlaps(found, m.index, m[0].length) && isCardRun(m[0]))
      found.push({ kind: 'card', index: m.index, text: m[0] });
  }
  for (const shape of PHONE_SHAPES) {
    for (const m of text.matchAll(shape)) {
      const phone = fitPhone(text, m.index, m[0]);
      if (phone === null || overlaps(found, m.index, phone.length)) continue;
      found.push({ kind: 'phone', index: m.index, text: phone });
    }
  }
  return found.sort((a, b) => a.index - b.index);
}

/** `text` with every email, card number and phone number replaced by its token. Idempotent:
 * masking repeats until nothing is found, since a datum written right against another (no space
 * between) shows its shape only once its neighbour is a token. Each pass removes digits or an @,
 * so it ends. */
export function maskPersonalData(text: string): string {
  for (;;) {
    const found = findPersonalData(text);
    if (found.length === 0) return text;
    let out = '';
    let from = 0;
    for (const d of found) {
      out += text.slice(from, d.index) + PERSONAL_DATA_TOKENS[d.kind];
      from = d.index + d.text.length;
    }
    text = out + text.slice(from);
  }
}

/** A datum as a breach message may show it (messages end up in acks and history): enough to find
 * it in the text, not enough to use it. */
export function obscurePersonalDatum({ kind, text }: PersonalDatum): string {
  if (kind === 'email') {
    const [local = '', domain = ''] = text.split('@');
    const tld = domain.slice(domain.lastIndexOf('.'));
    return `email ${local.slice(0, 1)}***@${domain.slice(0, 1)}***${tld}`;
  }
  const digits = text.replace(/\D/g, '');
  return kind === 'card' ? `card number ending ${digits.slice(-4)}` : `phone number ending ${digits.slice(-2)}`;
}
