// The client schema against the sandbox's own validator, on random records: a record this library
// accepts is one the service accepts, a record it refuses the service refuses too, with the same
// messages. The deliberate differences: the email format, left out of the generated data, the
// status message, which also names the word forms this library accepts ("create"...), and the
// message for an amount given as a number of more than 15 significant digits, which says why.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { normalizeAccount } from '../../src/accounts/normalize.ts';
import { ACCOUNT_STATUS_MESSAGE, validateAccount } from '../../src/accounts/schema.ts';
import { ACCOUNT_STATUS_MESSAGE as SERVICE_STATUS_MESSAGE, accountErrors } from '../../src/sandbox/accounts/validate-account.ts';

const field = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>) =>
  fc.option(fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: bad }), { nil: undefined, freq: 5 });

const text = fc.constantFrom('x', 'Amal', 'A-1', '  padded  ');
const badText = fc.constantFrom('', '   ', 5, null, true, ['x']);
const date = fc.oneof(fc.constantFrom('01/01/2000', '29/02/2024', '31/12/2026'), fc.date({ min: new Date('1950-01-01'), max: new Date('2050-01-01'), noInvalidDate: true }));
const badDate = fc.constantFrom('31/02/2024', '2024/01/01', '1/1/2024', '00/01/2024', 20240101, '', null);
const money = fc.oneof(
  fc.constantFrom('0', '10', '-3.25', '100.50'), fc.integer({ min: -1000, max: 1_000_000 }),
  fc.integer({ min: -100_000_000, max: 100_000_000 }).map((cents) => cents / 100), fc.double({ min: 0, max: 1e6, noNaN: true }),
);
const badMoney = fc.constantFrom('1e3', 'abc', '', ' 1', '1,000', '.5', Number.NaN, {}, null);

const record = fc.record(
  {
    status: field(fc.constantFrom(1, 2, 3, 'create', 'update', 'withdraw', '2'), fc.constantFrom(0, 4, 'delete', null, '')),
    debtorCompanyId: field(text, badText),
    firstName: field(text, badText),
    lastName: field(text, badText),
    language: field(fc.constantFrom('en', 'ar'), fc.constantFrom('EN', 'fr', '', null, 1)),
    idNumber: field(text, fc.constantFrom(5, {})),
    passportNumber: field(text, fc.constantFrom(5)),
    birthDate: field(date, badDate),
    gender: field(fc.constantFrom('male', 'female'), fc.constantFrom('other', 'MALE', 1)),
    nationality: field(text, fc.constantFrom(7)),
    phones: field(fc.array(fc.record({ number: fc.constantFrom('+971500000000', '05'), type: fc.option(fc.constantFrom('mobile', 'work'), { nil: undefined }) })), fc.constantFrom('x', [{}], [null], [{ number: '' }], [{ number: '1', type: 2 }])),
    emails: field(fc.array(fc.record({ email: fc.constantFrom('a@b.co', 'x.y@example.com') })), fc.constantFrom('x', [{}], [{ email: 3 }])),
    addresses: field(fc.array(fc.record({ city: fc.option(text, { nil: undefined }), country: fc.option(fc.constantFrom('ARE', 'SAU', 'BHR'), { nil: undefined }) })), fc.constantFrom([{ country: 'UAE' }], [{ country: 'are' }], [{ zip: 1 }], {}, [5])),
    accountId: field(text, badText),
    subAccountId: field(text, badText),
    merchant: field(text, fc.constantFrom(1)),
    dateDue: field(date, badDate),
    principal: field(money, badMoney),
    interest: field(money, badMoney),
    fees: field(money, badMoney),
    paidAmount: field(money, badMoney),
    paidDate: field(fc.oneof(date, fc.constant('')), badDate),
    additionalData: field(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 })), fc.constantFrom([], 'x', 3)),
    loanType: field(fc.constantFrom(1, 4, 8, '3'), fc.constantFrom(0, 9, 2.5, 'x')),
  },
  { requiredKeys: [] },
);

/** Our message in the service's words, where ours says more. */
function inServiceWords(message: string): string {
  if (message === ACCOUNT_STATUS_MESSAGE) return SERVICE_STATUS_MESSAGE;
  return message.replace(/^(\S+) is a number with more than 15 significant digits, .*$/, '$1 must be a valid number');
}

describe('schema against the sandbox validator', () => {
  it('property: same verdict and same messages as the service on what would be sent', () => {
    fc.assert(
      fc.property(record, (raw) => {
        const input = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
        const mine = validateAccount(input);
        const theirs = accountErrors(normalizeAccount(input) as Record<string, unknown>);
        const ours = mine.ok ? [] : mine.errors.map(inServiceWords);
        assert.deepEqual(ours.sort(), [...theirs].sort());
      }),
      { numRuns: 2000 },
    );
  });

  it('property: strict, the same verdict and messages as the strict sandbox (both required lists)', () => {
    fc.assert(
      fc.property(record, (raw) => {
        const input = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
        const mine = validateAccount(input, { strict: true });
        const theirs = accountErrors(normalizeAccount(input) as Record<string, unknown>, true);
        const ours = mine.ok ? [] : mine.errors.map(inServiceWords);
        assert.deepEqual(ours.sort(), [...theirs].sort());
      }),
      { numRuns: 2000 },
    );
  });
});
