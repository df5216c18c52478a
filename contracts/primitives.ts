/** Field schemas shared by the package, the artifacts and the job API. */
import { z } from 'zod';
import { LIMITS } from './limits';
import { BIDI_CONTROLS, ID_PATTERN, SLUG_PATTERN } from './names';
import { TRACEPARENT_PATTERN, TRACEPARENT_ZERO_ID_PATTERN } from './traceparent';

// Character classes as pattern text (`\\uXXXX` escapes), so the generated JSON Schema spells them too.
const NUL = '\\u0000';
/** With the `u` flag a surrogate pair is one code point outside this range: only unpaired
 * surrogates match, which are not valid UTF-8 and cannot be stored or hashed faithfully. */
const UNPAIRED_SURROGATE = '\\uD800-\\uDFFF';
/** Not visible on one line: C0/C1 controls, soft hyphen, bidi controls (U+202E can make a name
 * read backwards), zero-width and other invisible format characters, line/paragraph separators. */
const INVISIBLE =
  '\\u0000-\\u001F\\u007F-\\u009F\\u00AD\\u061C\\u180E\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u206F\\uFEFF\\uFFF9-\\uFFFB';
const without = (chars: string) => new RegExp(`^[^${chars}]*$`, 'u');
const notBlank = [/\S/u, { message: 'must not be blank' }] as const;

/** Any text: no NUL, which PostgreSQL cannot store (SQLite would, so the stores would differ). */
export const text = (max: number) =>
  z.string().max(max).regex(without(NUL), { message: 'must not contain NUL (U+0000)' });
export const nonEmptyText = (max: number) => text(max).min(1);

/** Text a caller hands in (entries, requests, decisions): also well-formed Unicode, so both stores
 * hold exactly what a hash was taken of. Refused, not repaired, so a job never starts on it. */
export const inputText = (max: number) =>
  z
    .string()
    .max(max)
    .regex(without(NUL + UNPAIRED_SURROGATE), { message: 'must not contain NUL or an unpaired surrogate' });
export const nonBlankText = (max: number) => inputText(max).regex(...notBlank);

/** Caller text a person reads (a escalation record's summary, questions and steps; a decision's
 * note): also no bidi embedding, override or isolate, refused like the rest so the caller learns
 * which field, and nothing reads differently from what was written. */
export const readableText = (max: number) =>
  inputText(max).regex(without(BIDI_CONTROLS), {
    message: 'must not contain bidi embedding, override or isolate characters (U+202A–U+202E, U+2066–U+2069)',
  });
export const nonBlankReadableText = (max: number) => readableText(max).regex(...notBlank);

/** Who did something (a decision's actor, recorded on acks): visible characters on one line. */
export const visibleName = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(without(INVISIBLE + UNPAIRED_SURROGATE), {
      message: 'must not contain control, invisible or bidi characters',
    })
    .regex(...notBlank);

export const list = <T extends z.ZodType>(item: T, max: number = LIMITS.listItems) => z.array(item).max(max);

export const id = z.string().min(1).max(LIMITS.id).regex(ID_PATTERN);

export const slug = z.string().min(1).max(LIMITS.name).regex(SLUG_PATTERN);

/** Any absolute URI (s3://, handrail://, data:). Kept to scheme + no whitespace: a full RFC 3986
 * regex is slow on 48 kB data: URIs and adds nothing the reader of the URI won't check. */
export const uri = z
  .string()
  .max(LIMITS.uri)
  .regex(/^[A-Za-z][A-Za-z0-9+.\-]*:\S+$/);

export const sha256 = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** RFC 3339 date-time with an offset (`Z` included). */
export const isoTime = z.iso.datetime({ offset: true });

export const usd = z.number().min(0).max(LIMITS.usd);
export const count = z.int().min(0);
export const revisions = count.max(LIMITS.revisions);

const zeroIds = new RegExp(TRACEPARENT_ZERO_ID_PATTERN);

export const traceparent = z
  .string()
  .max(LIMITS.traceparent)
  .regex(new RegExp(TRACEPARENT_PATTERN))
  .refine((s) => !zeroIds.test(s), {
    message: 'trace id and parent id must not be all zeros',
  })
  // Refinements do not reach JSON Schema; this carries the same rule into the generated file.
  .meta({ not: { pattern: TRACEPARENT_ZERO_ID_PATTERN } });

/** Escalation record ids are made by the store from the begin key: `hr_` and 32 hex digits. */
export const escalationRecordId = z.string().regex(/^hr_[0-9a-f]{32}$/);

/** @deprecated Use escalationRecordId. */
export const handoffRecordId = escalationRecordId;
