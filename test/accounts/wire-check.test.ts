// The wire-form fast check (wire-check.ts) against the zod schema it stands in for: whenever it
// says yes, zod says yes too and its output serialises to the same JSON (up to key order), so
// validateAccount's verdicts, values and messages are the schema's whatever path a record takes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { normalizeAccount } from '../../src/accounts/normalize.ts';
import { accountSchema, formatIssue, strictAccountSchema, validateAccount } from '../../src/accounts/schema.ts';
import { isWireAccount } from '../../src/accounts/wire-check.ts';

const valid = {
  status: 1, debtorCompanyId: 'C-1', firstName: 'Amal', lastName: 'Haddad', language: 'en', accountId: 'A-1',
  subAccountId: 'S1', principal: '10.50',
};

/** Sorted-key JSON, so two objects that differ only in key order compare equal. */
function canonical(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function zodVerdict(input: unknown, strict: boolean) {
  const result = (strict ? strictAccountSchema : accountSchema).safeParse(normalizeAccount(input));
  return result.success ? { ok: true as const, value: result.data } : { ok: false as const, errors: result.error.issues.map(formatIssue) };
}

class Custom {
  number = '1';
}

// Values that are fine, subtly wrong, or odd in ways JSON.stringify and zod treat differently.
const odd = fc.constantFrom<unknown>(
  null, undefined, '', '  ', 'x', 0, 1, 2.5, -0, Number.NaN, true, [], {}, [1], new Date(0), Object.create(null),
  JSON.parse('{"__proto__":{"a":1}}'), { [Symbol('s')]: 1 }, new Custom(),
);
const text = fc.oneof(fc.constantFrom('x', 'Amal', ' padded ', ''), odd);
const dateText = fc.oneof(fc.constantFrom('01/01/2000', '29/02/2024', '31/02/2024', '2024-01-31', '1/1/2024', ''), odd);
const moneyText = fc.oneof(fc.constantFrom('0', '-3.25', '1e3', '.5', ' 1', 'x'.repeat(70), '1'.repeat(64)), fc.integer(), odd);
const element = (key: string) =>
  fc.oneof(
    fc.record({ [key]: text, type: fc.oneof(text, fc.constant(undefined)), country: fc.constantFrom(undefined, 'ARE', 'are', 'XKX', 5) }, { requiredKeys: [] }),
    odd,
  );
const list = (key: string) => fc.oneof(fc.array(element(key), { maxLength: 3 }), odd, fc.constant([, { [key]: '1' }]));

const record = fc.record(
  {
    status: fc.constantFrom<unknown>(1, 2, 3, 4, '2', 'create', 1.5, null),
    debtorCompanyId: text, firstName: text, lastName: text, accountId: text, subAccountId: text,
    language: fc.constantFrom<unknown>('en', 'ar', 'EN', '', null),
    idNumber: text, emiratesId: text, passportNumber: text, nationality: text, merchant: text,
    gender: fc.constantFrom<unknown>('male', 'female', 'other', null, undefined),
    birthDate: dateText, dateDue: dateText, paidDate: dateText,
    principal: moneyText, interest: moneyText, fees: moneyText, paidAmount: moneyText,
    phones: list('number'), emails: list('email'), addresses: list('city'),
    additionalData: fc.oneof(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 })), odd),
    loanType: fc.constantFrom<unknown>(1, 8, 0, 9, 2.5, '3', null),
    custom: odd,
  },
  { requiredKeys: [] },
);
// Mostly valid records with a few fields replaced, so both paths are exercised often.
const mostlyValid = fc.tuple(record, fc.subarray(['status', 'debtorCompanyId', 'firstName', 'language', 'principal', 'phones', 'addresses', 'additionalData', 'loanType', 'birthDate', 'dateDue', 'paidDate', 'custom'])).map(
  ([r, keys]) => ({ ...valid, phones: [{ number: '1' }], birthDate: '01/01/2000', dateDue: '31/12/2026', loanType: 2, ...Object.fromEntries(keys.map((k) => [k, (r as Record<string, unknown>)[k]])) }),
);

describe('wire-form fast check', () => {
  for (const strict of [false, true]) {
    it(`property${strict ? ' (strict)' : ''}: a yes is zod's yes with the same JSON; validateAccount always agrees with zod`, () => {
      fc.assert(
        fc.property(fc.oneof(record, mostlyValid), (input) => {
          const zod = zodVerdict(input, strict);
          const mine = validateAccount(input, { strict });
          if (isWireAccount(normalizeAccount(input), strict)) {
            assert.ok(zod.ok, 'the fast check accepted a record zod refuses');
            assert.deepEqual(canonical(normalizeAccount(input)), canonical(zod.value));
          }
          assert.equal(mine.ok, zod.ok);
          if (mine.ok && zod.ok) assert.deepEqual(canonical(mine.value), canonical(zod.value));
          if (!mine.ok && !zod.ok) assert.deepEqual(mine.errors, zod.errors);
        }),
        { numRuns: 3000 },
      );
    });
  }

  it('takes plain wire-form records, and leaves odd objects to zod', () => {
    assert.equal(isWireAccount(valid, false), true);
    assert.equal(isWireAccount({ ...valid, phones: [{ number: '1', ext: 2 }], additionalData: { a: [1] } }, false), true);
    assert.equal(isWireAccount(Object.assign(Object.create(null), valid), false), false);
    assert.equal(isWireAccount(JSON.parse(`{"__proto__":{"x":1},${JSON.stringify(valid).slice(1)}`), false), false);
    assert.equal(isWireAccount({ ...valid, additionalData: { [Symbol('s')]: 1 } }, false), false);
    assert.equal(isWireAccount({ ...valid, phones: [new Custom()] }, false), false);
    assert.equal(isWireAccount({ ...valid, phones: [, { number: '1' }] }, false), false);
    assert.equal(isWireAccount(valid, true), false, 'strict needs birthDate, dateDue, phones and loanType');
  });

  it('validateAccount returns a copy, never the record written', () => {
    const input = { ...valid };
    const result = validateAccount(input);
    assert.ok(result.ok);
    assert.notEqual(result.value, input);
    assert.deepEqual(result.value, input);
  });
});
