// The account and status-update schemas: messages in the service's words, the required sets,
// real dates, money, enums, countries, and the normalisation of friendly input.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { accountSchema, validateAccount, validateStatusUpdate } from '../../src/accounts/schema.ts';
import { normalizeAccount, toDecimalString, toServiceDate } from '../../src/accounts/normalize.ts';

const valid = {
  status: 1,
  debtorCompanyId: 'C-1',
  firstName: 'Amal',
  lastName: 'Haddad',
  language: 'en',
  accountId: 'A-1',
  subAccountId: 'S-1',
  principal: '100.50',
};

function errorsOf(input: unknown, strict = false): string[] {
  const result = validateAccount(input, { strict });
  return result.ok ? [] : result.errors;
}

describe('account schema', () => {
  it('accepts a record with the service-enforced fields and keeps unknown fields', () => {
    const result = validateAccount({ ...valid, emiratesId: '784-1', custom: 1 });
    assert.equal(result.ok, true);
    assert.deepEqual(result.ok && result.value, { ...valid, emiratesId: '784-1', custom: 1 });
  });

  it('requires the must-fail set and the rest of the prose list, in the service wording', () => {
    assert.deepEqual(errorsOf({}), [
      'status is required',
      'debtorCompanyId is required',
      'firstName is required',
      'lastName is required',
      'language is required',
      'accountId is required',
      'subAccountId is required',
      'principal is required',
    ]);
  });

  it('treats null and blank strings as missing, as the service does', () => {
    assert.deepEqual(errorsOf({ ...valid, firstName: '   ', lastName: null, principal: '' }), [
      'firstName is required',
      'lastName is required',
      'principal is required',
    ]);
  });

  it('strict also requires birthDate, dateDue, phones and loanType', () => {
    assert.deepEqual(errorsOf(valid, true), ['birthDate is required', 'phones is required', 'dateDue is required', 'loanType is required']);
    assert.deepEqual(errorsOf({ ...valid, birthDate: '01/02/1990', dateDue: '01/03/2026', phones: [], loanType: 3 }, true), []);
    assert.deepEqual(errorsOf(valid, false), []);
  });

  it('checks dd/MM/yyyy dates are real calendar days; paidDate may be empty', () => {
    assert.deepEqual(errorsOf({ ...valid, birthDate: '29/02/2024', dateDue: '31/12/2026', paidDate: '' }), []);
    assert.deepEqual(errorsOf({ ...valid, birthDate: '29/02/2023', dateDue: '2026-13-01', paidDate: 'soon' }), [
      'birthDate must be a valid date in dd/MM/yyyy format',
      'dateDue must be a valid date in dd/MM/yyyy format',
      'paidDate must be a valid date in dd/MM/yyyy format',
    ]);
    assert.deepEqual(errorsOf({ ...valid, dateDue: '' }), ['dateDue must be a valid date in dd/MM/yyyy format']);
  });

  it('checks money strings are plain decimals', () => {
    assert.deepEqual(errorsOf({ ...valid, principal: '-12.5', interest: '0', fees: '10.00', paidAmount: '3' }), []);
    assert.deepEqual(errorsOf({ ...valid, principal: '1e3', interest: '1,000', fees: ' 1', paidAmount: '' }), [
      'principal must be a valid number',
      'interest must be a valid number',
      'fees must be a valid number',
      'paidAmount must be a valid number',
    ]);
    assert.deepEqual(errorsOf({ ...valid, principal: '1'.repeat(65) }), ['principal must be a valid number']);
  });

  it('checks enums, status, loanType and additionalData', () => {
    assert.deepEqual(errorsOf({ ...valid, status: 4, language: 'fr', gender: 'x', loanType: 9, additionalData: [1] }), [
      'Invalid status value. Accepted values: 1, 2, 3 (or "create", "update", "withdraw")',
      'language must be one of en, ar',
      'gender must be one of male, female',
      'additionalData must be an object',
      'loanType must be an integer from 1 to 8',
    ]);
    assert.deepEqual(errorsOf({ ...valid, gender: 'female', language: 'ar', loanType: 8, additionalData: { productType: 'x', n: 1 } }), []);
    assert.deepEqual(errorsOf({ ...valid, loanType: 2.5 }), ['loanType must be an integer from 1 to 8']);
  });

  it('checks nested phones, emails and addresses with their index in the path', () => {
    assert.deepEqual(
      errorsOf({ ...valid, phones: [{ number: '+9715' }, {}, 'x'], emails: [{ type: 'work' }], addresses: [{ country: 'ARE' }, { country: 'UAE', zip: 5 }] }),
      [
        'phones[1].number is required',
        'phones[2] must be an object',
        'emails[0].email is required',
        'addresses[1].zip must be a string',
        'addresses[1].country must be a valid ISO 3166-1 alpha-3 code',
      ],
    );
    assert.deepEqual(errorsOf({ ...valid, phones: 'x' }), ['phones must be an array']);
    assert.deepEqual(errorsOf({ ...valid, addresses: [{ country: 'SAU' }, { country: 'BHR' }] }), []);
  });

  it('leaves the format of an email address to the service (the service documents no rule)', () => {
    assert.deepEqual(errorsOf({ ...valid, emails: [{ email: 'not-an-address' }] }), []);
  });

  it('refuses a non-object with the service message', () => {
    for (const input of [null, 5, 'x', [valid]]) assert.deepEqual(errorsOf(input), ['account must be an object']);
  });

  it('refuses a record with a toJSON of its own, or an object in it with one (JSON.stringify would send its result, not the fields checked); a class\'s toJSON is not the record\'s', () => {
    const message = 'toJSON: the record, or an object in it, has a toJSON method of its own, whose result would be sent instead of what was checked; give the fields as they are';
    const own = { ...valid, toJSON: () => ({ hello: 1 }) };
    assert.deepEqual(errorsOf(own), [message]);
    assert.deepEqual(errorsOf(own, true), [message]);
    const phone = { number: '+971500000000', toJSON: () => ({ number: 12 }) };
    assert.deepEqual(errorsOf({ ...valid, phones: [phone] }), [message]);
    assert.deepEqual(errorsOf({ ...valid, additionalData: { note: { toJSON: () => 'x' } } }), [message]);
    // Not enumerable, or on an array: JSON.stringify calls it all the same.
    assert.deepEqual(errorsOf(Object.defineProperty({ ...valid }, 'toJSON', { value: () => ({}), enumerable: false })), [message]);
    assert.deepEqual(errorsOf({ ...valid, phones: Object.assign([{ number: '+971500000000' }], { toJSON: () => [] }) }), [message]);
    const flag = validateStatusUpdate({ status: 5, debtorCompanyId: 'C', accountId: 'A', toJSON: () => ({}) });
    assert.deepEqual(!flag.ok && flag.errors, [message]);
    // A class instance's fields are copied into the value sent; its prototype's toJSON stays behind.
    class Model {
      constructor(fields: object) { Object.assign(this, fields); }
      toJSON() { return { other: true }; }
    }
    const result = validateAccount(new Model(valid));
    assert.equal(result.ok, true);
    assert.deepEqual(JSON.parse(JSON.stringify(result.ok && result.value)), valid);
  });
});

describe('normalisation of friendly input', () => {
  it('turns ISO dates into the day they name, and Dates into their UTC day unless at local midnight, as dd/MM/yyyy', () => {
    assert.equal(toServiceDate(new Date('2024-02-29T23:59:59Z')), '29/02/2024');
    assert.equal(toServiceDate('2024-03-01'), '01/03/2024');
    assert.equal(toServiceDate('2024-03-01T23:30:00-05:00'), '01/03/2024');
    assert.equal(toServiceDate('1990-05-01T00:00:00+04:00'), '01/05/1990');
    assert.equal(toServiceDate('2024-03-01T10:00:00.000Z'), '01/03/2024');
    assert.equal(toServiceDate('01/03/2024'), '01/03/2024');
    assert.equal(toServiceDate('2024-02-30'), '2024-02-30');
    assert.ok(Number.isNaN((toServiceDate(new Date('nope')) as Date).getTime()));
  });

  it('a Date at local midnight (a DATE column from a database driver) is that day in every time zone; one at UTC midnight its UTC day', () => {
    // Each zone in a process of its own: the time zone is read when Node starts.
    const script = `import { toServiceDate } from ${JSON.stringify(new URL('../../src/accounts/normalize.ts', import.meta.url).pathname)};
      console.log(JSON.stringify([toServiceDate(new Date(1990, 4, 1)), toServiceDate(new Date('1990-05-01')), toServiceDate(new Date(2020, 2, 29))]));`;
    for (const zone of ['Asia/Dubai', 'Asia/Riyadh', 'UTC', 'America/New_York', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Asia/Beirut']) {
      const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...process.env, TZ: zone }, encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      const [localMidnight, utcMidnight, springForward] = JSON.parse(run.stdout) as string[];
      assert.equal(localMidnight, '01/05/1990', zone);
      assert.equal(utcMidnight, '01/05/1990', zone);
      // In Beirut clocks went from 00:00 to 01:00 that day: the day starts at 01:00 local.
      assert.equal(springForward, '29/03/2020', zone);
    }
  });

  it('turns finite numbers into plain decimal strings', () => {
    assert.equal(toDecimalString(100), '100');
    assert.equal(toDecimalString(0.1), '0.1');
    assert.equal(toDecimalString(1e21), '1000000000000000000000');
    assert.equal(toDecimalString(1e-7), '0.0000001');
    assert.equal(toDecimalString(1.5e-21), '0.0000000000000000000015');
    assert.equal(toDecimalString(-2.5e-7), '-0.00000025');
    assert.equal(toDecimalString(1.25e22), '12500000000000000000000');
    assert.equal(toDecimalString(5e-324), `0.${'0'.repeat(323)}5`);
    // Every value reads back as the same number.
    for (const n of [1.5e-21, 1e308, 123456789e-30, -9.87654321e25, 2 ** -40, 999_999_999_999_999, 0.123456789012345]) {
      assert.equal(Number(toDecimalString(n)), n);
    }
    assert.equal(toDecimalString(Number.NaN), Number.NaN);
    assert.equal(toDecimalString('7'), '7');
  });

  it('leaves a number of more than 15 significant digits as it is, and the schema refuses it: its text may have held other digits', () => {
    // 12345678901234567.89 in a JSON file is read as 12345678901234568; 0.1 + 0.2 is 0.30000000000000004.
    for (const n of [12345678901234567.89, 0.1 + 0.2, 123456789012345.6, 1.7976931348623157e308, 2 ** -60, 12345678901234560000]) {
      assert.equal(toDecimalString(n), n, String(n));
    }
    const message = 'is a number with more than 15 significant digits, which JSON numbers do not keep exactly; give it as a string';
    const line = JSON.stringify(valid).replace('"100.50"', '12345678901234567.89');
    assert.deepEqual(errorsOf(JSON.parse(line)), [`principal ${message}`]);
    assert.deepEqual(errorsOf({ ...valid, fees: 0.1 + 0.2 }), [`fees ${message}`]);
    assert.deepEqual(errorsOf({ ...valid, principal: Number.NaN }), ['principal must be a valid number']);
    // The schemas used directly (without the normalising) say the same of such a number, and that
    // any other number must be given as text.
    const direct = accountSchema.safeParse({ ...valid, principal: 100, fees: 0.1 + 0.2, interest: Number.NaN });
    assert.deepEqual(!direct.success && direct.error.issues.map((i) => `${String(i.path[0])} ${i.message}`).sort(),
      [`fees ${message}`, 'interest must be a valid number', 'principal must be a string holding a decimal, such as "100.50"']);
    assert.deepEqual(errorsOf({ ...valid, principal: '12345678901234567.89' }), [], 'as a string, every digit is kept');
  });

  it('maps operation names and numeric text, without mutating the input', () => {
    const input = { ...valid, status: 'withdraw', principal: 70, loanType: '3', dateDue: new Date(Date.UTC(2026, 0, 31)) };
    const copy = structuredClone(input);
    const result = validateAccount(input);
    assert.deepEqual(result.ok && result.value, { ...valid, status: 3, principal: '70', loanType: 3, dateDue: '31/01/2026' });
    assert.deepEqual(input, copy);
    assert.deepEqual(normalizeAccount({ status: 'remove' }), { status: 'remove' });
    assert.deepEqual(errorsOf({ ...valid, status: 'remove' }), ['Invalid status value. Accepted values: 1, 2, 3 (or "create", "update", "withdraw")']);
  });
});

describe('status update schema', () => {
  it('accepts 5/6 and the names disputed/doNotContact', () => {
    for (const [status, code] of [[5, 5], [6, 6], ['disputed', 5], ['doNotContact', 6]] as const) {
      const result = validateStatusUpdate({ status, debtorCompanyId: 'C', accountId: 'A' });
      assert.deepEqual(result.ok && result.value, { status: code, debtorCompanyId: 'C', accountId: 'A' });
    }
  });

  it('refuses anything else with the service messages', () => {
    const result = validateStatusUpdate({ status: 1, accountId: ' ' });
    assert.deepEqual(!result.ok && result.errors, [
      'Invalid status value. Accepted values: 5, 6 (or "disputed", "doNotContact")',
      'debtorCompanyId is required',
      'accountId is required',
    ]);
    const missing = validateStatusUpdate({ debtorCompanyId: 'C', accountId: 'A' });
    assert.deepEqual(!missing.ok && missing.errors, ['status is required']);
  });
});
