import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CONSTRAINT_POLICIES,
  constraintBreaches,
  policiesFor,
  redactPersonalDataFor,
} from '../../../contracts/constraints';
import { artifactBody, fixturePackage } from './helpers';

const NO_REFUND = ['no refund promises'];
const flagged = (text: string, constraints = NO_REFUND) =>
  constraintBreaches(constraints, { text, toolsUsed: [] }).map((b) => b.policy);

describe('policiesFor', () => {
  it.each([
    'no refund promises',
    'No refund promise',
    'Never promise refunds',
    'never promise a refund',
    'Do not promise a refund',
    'no refund promises to the customer',
  ])('recognises "%s" as no_refund_promises', (c) => {
    expect(policiesFor([c]).map((p) => p.id)).toEqual(['no_refund_promises']);
  });

  it.each(['do not send to customer', 'internal only', 'no customer email', 'No email'])(
    'recognises "%s" as no_outward_send',
    (c) => {
      expect(policiesFor([c]).map((p) => p.id)).toEqual(['no_outward_send']);
    },
  );

  it.each([
    'redact personal data',
    'Redact PII',
    'mask personal information',
    'no personal data in notes',
    'No PII in the CRM note',
    'remove email addresses and phone numbers',
    'anonymise personally identifiable information',
    'never include personal details',
    'do not store personal data',
  ])('recognises "%s" as redact_personal_data', (c) => {
    expect(policiesFor([c]).map((p) => p.id)).toEqual(['redact_personal_data']);
  });

  it.each([
    'cite help center or no_match',
    'refunds are allowed within 30 days',
    'be polite',
    'personal data requests go to the privacy team',
    'mask nothing',
  ])('recognises no policy in "%s"', (c) => {
    expect(policiesFor([c])).toEqual([]);
  });

  it('applies each policy once however many constraints name it, in table order', () => {
    expect(
      policiesFor(['redact PII', 'internal only', 'no refund promises', 'never promise refunds']).map((p) => p.id),
    ).toEqual(CONSTRAINT_POLICIES.map((p) => p.id));
  });

  it('recognises the constraints on the committed valid fixture', () => {
    expect(policiesFor(fixturePackage().constraints).map((p) => p.id)).toEqual(['no_refund_promises']);
  });
});

describe('no_refund_promises: promises are detected', () => {
  it.each([
    'We will refund you the $20 today.',
    "I'll issue a full refund today.",
    'We shall process your refund by Friday.',
    "We're going to refund the duplicate charge.",
    'We are going to refund the charge.',
    'We will fully refund the March invoice.',
    'You will be refunded within 5 days.',
    "You'll receive a full refund.",
    'You will get your refund next week.',
    'Your refund has been approved.',
    'Your refund is on its way.',
    'Refund was issued this morning.',
    'We guarantee a full refund.',
    'We have issued a refund to your card.',
    'We can issue a refund for the duplicate charge.',
    'Thanks for waiting.\nWE WILL REFUND YOU.',
  ])('flags "%s"', (text) => {
    expect(flagged(text)).toEqual(['no_refund_promises']);
  });

  it('quotes the promise in the breach', () => {
    const [b] = constraintBreaches(NO_REFUND, { text: 'Sorry! Your refund has been approved.', toolsUsed: [] });
    expect(b!.breach).toBe('promises a refund: "Your refund has been approved"');
  });

  // Contractions and -ed past tenses (a regression once: " 've" and "(?:d)?" missed these).
  it.each([
    "We've issued a refund to your card.",
    "I've approved your refund.",
    'We have processed your refund.',
    'I have refunded your payment in full.',
  ])('flags "%s"', (text) => {
    expect(flagged(text)).toEqual(['no_refund_promises']);
  });
});

describe('no_refund_promises: mentions of the refund policy are not promises', () => {
  it.each([
    'Refunds are handled by billing.',
    'See the [refund-policy] article for eligibility.',
    'Refund requests are reviewed within 5 business days.',
    'The refund policy allows refunds within 30 days of purchase.',
    'Per the refund policy, a refund is issued only after billing approves the request.',
    'The customer asks whether a refund is possible.',
    'Duplicate charges are reversed within 5 business days.',
    'We will review the refund request.',
    'Refunds are issued to the original payment method.',
  ])('does not flag "%s"', (text) => {
    expect(flagged(text)).toEqual([]);
  });

  it('does not flag the committed summary and chunks fixtures', () => {
    const summary = artifactBody('summary_md') as { markdown: string };
    expect(flagged(summary.markdown)).toEqual([]);
    expect(flagged(JSON.stringify(artifactBody('chunks.v1')))).toEqual([]);
  });

  it("does not count the customer's words, quoted in a blockquote, as the note promising anything", () => {
    const note =
      "**Question** (the customer's words):\n> Your refund has been approved, right?\n\nRefunds are handled by billing.";
    expect(flagged(note)).toEqual([]);
    // The same words as the note's own are a promise.
    expect(flagged('Your refund has been approved.')).not.toEqual([]);
    expect(flagged('> quoted\nYour refund has been approved.')).not.toEqual([]);
  });

  it('does not police text when the job has no refund constraint', () => {
    expect(flagged('We will refund you.', ['cite help center or no_match'])).toEqual([]);
  });
});

describe('no_outward_send', () => {
  const used = (toolsUsed: string[]) => constraintBreaches(['internal only'], { text: '', toolsUsed });

  it.each(['email.send', 'email_reply', 'mail-send', 'sms.send', 'chat.reply', 'customer.message', 'Email.Send'])(
    'flags %s',
    (tool) => {
      expect(used([tool])).toEqual([{ policy: 'no_outward_send', breach: `used outward-facing tool ${tool}` }]);
    },
  );

  it.each(['crm.patch', 'helpcenter.search', 'tickets.read', 'kb.search', 'email.lookup'])(
    'does not flag %s',
    (tool) => {
      expect(used([tool])).toEqual([]);
    },
  );

  it('reports both policies when an output breaks both', () => {
    const breaches = constraintBreaches(['no refund promises', 'do not send to customer'], {
      text: 'We will refund you.',
      toolsUsed: ['email.send'],
    });
    expect(breaches.map((b) => b.policy)).toEqual(['no_refund_promises', 'no_outward_send']);
  });
});

describe('redact_personal_data', () => {
  const REDACT = ['redact personal data'];
  const breaches = (text: string) => constraintBreaches(REDACT, { text, toolsUsed: [] });

  it('reports the first unmasked datum obscured, and how many more there are', () => {
    expect(breaches('Reach jane.doe@example.com or +1 415 555 0132 about card 4111 1111 1111 1111.')).toEqual([
      { policy: 'redact_personal_data', breach: 'leaves personal data unmasked: email j***@e***.com (and 2 more)' },
    ]);
    expect(breaches('Card 4111 1111 1111 1111 was charged.')[0]!.breach).toBe(
      'leaves personal data unmasked: card number ending 1111',
    );
    expect(breaches('Call (415) 555-0132.')[0]!.breach).toBe('leaves personal data unmasked: phone number ending 32');
  });

  it('never echoes the datum in the breach', () => {
    const [b] = breaches('My number is 415-555-0132 and my card 4111 1111 1111 1111');
    expect(b!.breach).not.toMatch(/555|4111 1111|0132/);
  });

  it("counts the customer's words in a blockquote: quoted personal data is still in the note", () => {
    expect(breaches("**Question** (the customer's words):\n> mail me at jane.doe@example.com")).toHaveLength(1);
  });

  it('passes a masked note and a note with ids, dates and amounts', () => {
    expect(
      breaches('Reach [email] or [phone]; card [card]. INV-2041 of 2026-03-14, $1,234.56, ticket T-1001.'),
    ).toEqual([]);
  });

  it('finds no breach in what redactPersonalDataFor wrote under the constraint', () => {
    const piece = fc.constantFrom(
      'jane.doe@example.com',
      '+1 415 555 0132',
      '4111 1111 1111 1111',
      '(415) 555-0132',
      ' ',
      '-',
      '.',
      'INV-2041',
      '2026-03-14',
      '7',
      'call me at ',
      '\n> ',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 20 }),
        (parts) => breaches(redactPersonalDataFor(REDACT, parts.join(''))).length === 0,
      ),
      { numRuns: 2000 },
    );
  });

  it('masks only under the constraint', () => {
    const note = 'Reach jane.doe@example.com.';
    expect(redactPersonalDataFor(['no refund promises'], note)).toBe(note);
    expect(redactPersonalDataFor(['no refund promises', 'redact PII'], note)).toBe('Reach [email].');
  });
});
