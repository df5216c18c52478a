import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findPersonalData, luhnValid, maskPersonalData, obscurePersonalDatum } from '../../../contracts/personal-data';

describe('maskPersonalData: what is masked', () => {
  it.each([
    ['jane.doe@example.com', '[email]'],
    ['Mail jane.doe+billing@mail.example.co.uk today', 'Mail [email] today'],
    ['<ops_team-1@example.io>', '<[email]>'],
  ])('emails: "%s"', (text, masked) => {
    expect(maskPersonalData(text)).toBe(masked);
  });

  it.each([
    '+1 415 555 0132',
    '+1-415-555-0132',
    '+14155550132',
    '+44 20 7946 0958',
    '+44 (0)20 7946 0958',
    '+33 1 23 45 67 89',
    '+49 30 1234567',
    '(415) 555-0132',
    '415-555-0132',
    '415.555.0132',
    '415 555 0132',
    '1 415 555 0132',
    '020 7946 0958',
    '06 12 34 56 78',
    '06.12.34.56.78',
    '(030) 1234567',
    '0171-1234567',
  ])('phone numbers: "%s"', (phone) => {
    expect(maskPersonalData(`Call me on ${phone}, thanks.`)).toBe('Call me on [phone], thanks.');
  });

  it.each([
    'phone: 4155550132',
    'Phone number 5550132',
    'tel 0612345678',
    'call me at 4155550132',
    'mobile #: +4915112345678',
  ])('an unformatted number right after a phone cue: "%s"', (text) => {
    expect(maskPersonalData(text)).toMatch(/\[phone\]$/);
  });

  it.each([
    '4111 1111 1111 1111',
    '4111-1111-1111-1111',
    '4111111111111111',
    '5555 5555 5555 4444',
    '3782 822463 10005',
    '6011000990139424',
  ])('card numbers that pass Luhn: "%s"', (card) => {
    expect(maskPersonalData(`Charged to ${card} twice.`)).toBe('Charged to [card] twice.');
  });

  it('masks a card number together with a number written right after it, so no half of it leaks', () => {
    expect(maskPersonalData('card 4111 1111 1111 1111 12 times')).toBe('card [card] times');
  });

  it('masks each datum of a ticket, leaving the prose around them', () => {
    const body =
      'Reach me at jane.doe@example.com or +1 415 555 0132. My card 4111 1111 1111 1111 was charged twice for INV-2041 on 2026-03-14.';
    expect(maskPersonalData(body)).toBe(
      'Reach me at [email] or [phone]. My card [card] was charged twice for INV-2041 on 2026-03-14.',
    );
  });

  it('stops a phone number before a date or an id written right after it', () => {
    expect(maskPersonalData('call +1 415 555 0132 2026-03-14')).toBe('call [phone] 2026-03-14');
  });
});

describe('maskPersonalData: what stays as written', () => {
  it.each([
    // Dates and times
    '2026-03-14',
    '14.03.2026',
    '03/14/2026',
    '03-14-2026',
    '01.02.26',
    '2026-03-14 10:30',
    // Ticket, invoice and order ids
    'INV-2041',
    'T-1001',
    'T-4155550132',
    'order #20412041',
    'ORD-4111111111111111-A',
    // Money
    '$1,234.56',
    '€20.00',
    '1 234,56 EUR',
    '$415 555 0132',
    '0.50',
    '£1,000,000',
    // Counts, short numbers, versions, addresses of machines
    '5 days',
    '30 days',
    '1 2 3 4 5 6 7 8',
    '100 200 300',
    'v10.2.3',
    '192.168.100.1',
    'HTTP 429',
    // Numbers of card length that fail Luhn (order numbers), and a cue-less unformatted number
    '1234567890123',
    '4111 1111 1111 1112',
    'order 4155550132',
    // Not emails
    'user@localhost',
    'see @support',
    'a@b.co415',
  ])('"%s"', (text) => {
    expect(maskPersonalData(text)).toBe(text);
  });
});

describe('luhnValid', () => {
  it.each([
    ['4111111111111111', true],
    ['79927398713', true],
    ['4111111111111112', false],
    ['1234567890123', false],
  ] as const)('%s → %s', (digits, valid) => {
    expect(luhnValid(digits)).toBe(valid);
  });
});

describe('obscurePersonalDatum', () => {
  it('names each kind without the datum', () => {
    const shown = findPersonalData('jane.doe@example.com, +1 415 555 0132, 4111 1111 1111 1111').map(
      obscurePersonalDatum,
    );
    expect(shown).toEqual(['email j***@e***.com', 'phone number ending 32', 'card number ending 1111']);
  });
});

// Text built from the pieces that make or break a match: digits, separators, @, dots, letters,
// parentheses, plus signs and the tokens themselves.
const piece = fc.constantFrom(
  ...'0123456789'.split(''),
  ' ',
  '-',
  '.',
  '(',
  ')',
  '+',
  '@',
  '/',
  ',',
  ':',
  'a',
  'x',
  'e',
  '\n',
  '[phone]',
  '[card]',
  '[email]',
  'phone ',
  'tel: ',
  'call me at ',
  '.com',
  'jane',
  '4111 1111 1111 1111',
  '415-555-0132',
);
const text = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));

describe('maskPersonalData: properties', () => {
  it('is idempotent', () => {
    fc.assert(
      fc.property(text, (t) => maskPersonalData(maskPersonalData(t)) === maskPersonalData(t)),
      { numRuns: 5000 },
    );
  });

  it('leaves nothing it would find', () => {
    fc.assert(
      fc.property(text, (t) => findPersonalData(maskPersonalData(t)).length === 0),
      { numRuns: 5000 },
    );
  });

  it('only takes characters out and puts tokens in', () => {
    const untokened = (s: string) => s.replace(/\[(?:email|phone|card)\]/g, '');
    const isSubsequence = (short: string, long: string) => {
      let i = 0;
      for (const c of long) if (c === short[i]) i++;
      return i === short.length;
    };
    fc.assert(
      fc.property(text, (t) => isSubsequence(untokened(maskPersonalData(t)), untokened(t))),
      { numRuns: 5000 },
    );
  });

  it('masks any Luhn-valid 16-digit card number written in groups of four, wherever it sits in prose', () => {
    const luhnCard = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 15, maxLength: 15 }).map((d) => {
      const body = d.join('');
      const check = [...'0123456789'].find((c) => luhnValid(body + c))!;
      return (body + check).replace(/(\d{4})(?=\d)/g, '$1 ');
    });
    fc.assert(
      fc.property(
        luhnCard,
        fc.constantFrom('Card ', 'paid with ', '('),
        (card, before) => maskPersonalData(`${before}${card}.`) === `${before}[card].`,
      ),
    );
  });
});
