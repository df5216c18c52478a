/** Turning a customer's question into search terms both full-text backends read the same way. */

// Function words and ticket pleasantries: they match every article and drown the signal (FTS5
// has no stopword list of its own, so without this "how do I" would hit the whole corpus).
const STOPWORDS = new Set(
  `a about after again all am an and any are as at be because been before being but by can cannot could did do does doing
  don dont for from get got had has have having he hello her here hi him his how i if im in into is it its ive just me
  my myself need no not now of off on once only or our out over please regards same she should so some still such than
  thank thanks that the their them then there these they this those through to too under until up us very was we were
  what when where which while who why will with would yes you your yours team tallybird hey dear`.split(/\s+/),
);

/** Lowercase single words (letters/digits, diacritics folded), stopwords dropped, first `max` kept. */
export function searchTerms(text: string, max = 16): string[] {
  const words = text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 2 && !STOPWORDS.has(w));
  return [...new Set(words)].slice(0, max);
}
