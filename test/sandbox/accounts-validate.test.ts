import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ISO_ALPHA3_CODES } from '../../src/sandbox/accounts/country-codes.ts';
import { isCalendarDate } from '../../src/sandbox/accounts/field-checks.ts';
import { validateAccount, validateAccountsRequest } from '../../src/sandbox/accounts/validate-account.ts';
import {
  FLAG_STATUS_MESSAGE,
  validateStatusUpdateRequest,
} from '../../src/sandbox/accounts/validate-status-update.ts';

const valid = (): Record<string, unknown> => ({
  status: 1,
  debtorCompanyId: 'C-1',
  firstName: 'Layla',
  lastName: 'Haddad',
  language: 'ar',
  accountId: 'A-1',
  subAccountId: 'A-1-01',
  principal: '100',
});

/** Errors of one record with the given fields replaced (undefined deletes the field). */
function errorsOf(patch: Record<string, unknown>): readonly string[] {
  const record = { ...valid(), ...patch };
  for (const [key, value] of Object.entries(patch)) if (value === undefined) delete record[key];
  const outcome = validateAccount(record);
  return outcome.ok ? [] : outcome.errors;
}

describe('account validation: required fields', () => {
  it('accepts the minimal record and keeps only known fields', () => {
    const outcome = validateAccount({ ...valid(), surprise: 'dropped' });
    assert.equal(outcome.ok, true);
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.value, valid());
  });

  for (const field of ['debtorCompanyId', 'firstName', 'lastName', 'accountId', 'subAccountId', 'principal', 'language']) {
    it(`${field} missing, null or blank -> "${field} is required"`, () => {
      assert.deepEqual(errorsOf({ [field]: undefined }), [`${field} is required`]);
      assert.deepEqual(errorsOf({ [field]: null }), [`${field} is required`]);
      assert.deepEqual(errorsOf({ [field]: '' }), [`${field} is required`]);
    });
  }

  it('status missing -> "status is required"', () => {
    assert.deepEqual(errorsOf({ status: undefined }), ['status is required']);
  });

  it('the optional fields of the machine schema may be omitted', () => {
    assert.deepEqual(errorsOf({ birthDate: undefined, dateDue: undefined, phones: undefined, loanType: undefined }), []);
  });

  it('reports every failure of a record, in field order', () => {
    assert.deepEqual(errorsOf({ firstName: undefined, principal: 'abc', gender: 'x' }), [
      'firstName is required',
      'gender must be one of male, female',
      'principal must be a valid number',
    ]);
  });
});

describe('account validation: formats', () => {
  it('status must be the integer 1, 2 or 3', () => {
    for (const status of [1, 2, 3]) assert.deepEqual(errorsOf({ status }), []);
    for (const status of [0, 4, 5, '1', 1.5, true]) {
      assert.deepEqual(errorsOf({ status }), ['Invalid status value. Accepted values: 1, 2, 3'], String(status));
    }
  });

  it('ids and names of another type -> "<field> must be a string"', () => {
    assert.deepEqual(errorsOf({ debtorCompanyId: 17 }), ['debtorCompanyId must be a string']);
    assert.deepEqual(errorsOf({ firstName: ['x'] }), ['firstName must be a string']);
    for (const field of ['idNumber', 'emiratesId', 'passportNumber', 'nationality', 'merchant']) {
      assert.deepEqual(errorsOf({ [field]: 5 }), [`${field} must be a string`]);
      assert.deepEqual(errorsOf({ [field]: 'ok' }), []);
    }
  });

  it('money: strings holding plain decimals; JSON numbers and junk are rejected', () => {
    for (const principal of ['0', '100', '100.50', '-5', '0.001', '007']) assert.deepEqual(errorsOf({ principal }), [], principal);
    for (const principal of [100, 'abc', '1e3', '1,000', ' 100', '1.', '.5', '+5', 'NaN', '9'.repeat(65), true, {}]) {
      assert.deepEqual(errorsOf({ principal }), ['principal must be a valid number'], String(principal));
    }
    for (const field of ['interest', 'fees', 'paidAmount']) {
      assert.deepEqual(errorsOf({ [field]: '12.5' }), []);
      assert.deepEqual(errorsOf({ [field]: 12.5 }), [`${field} must be a valid number`]);
      assert.deepEqual(errorsOf({ [field]: '' }), [`${field} must be a valid number`]);
    }
  });

  it('dates: dd/MM/yyyy naming a real calendar day', () => {
    for (const birthDate of ['01/01/1990', '29/02/2024', '31/12/2025']) assert.deepEqual(errorsOf({ birthDate }), [], birthDate);
    for (const birthDate of ['31/02/2024', '29/02/2023', '00/01/2020', '12/13/2020', '1/1/2020', '2020-01-01', '01/01/0000', 19900101, '']) {
      assert.deepEqual(errorsOf({ birthDate }), ['birthDate must be a valid date in dd/MM/yyyy format'], String(birthDate));
    }
    assert.deepEqual(errorsOf({ dateDue: '31/04/2026' }), ['dateDue must be a valid date in dd/MM/yyyy format']);
    assert.deepEqual(errorsOf({ paidDate: '31/04/2026' }), ['paidDate must be a valid date in dd/MM/yyyy format']);
  });

  it('paidDate alone may be an empty string', () => {
    assert.deepEqual(errorsOf({ paidDate: '' }), []);
    assert.deepEqual(errorsOf({ dateDue: '' }), ['dateDue must be a valid date in dd/MM/yyyy format']);
  });

  it('real-date check covers leap years and month lengths', () => {
    assert.equal(isCalendarDate('29/02/2000'), true);
    assert.equal(isCalendarDate('29/02/1900'), false);
    assert.equal(isCalendarDate('30/04/2026'), true);
    assert.equal(isCalendarDate('31/04/2026'), false);
  });

  it('language, gender and loanType enums', () => {
    assert.deepEqual(errorsOf({ language: 'en' }), []);
    assert.deepEqual(errorsOf({ language: 'fr' }), ['language must be one of en, ar']);
    assert.deepEqual(errorsOf({ language: 'EN' }), ['language must be one of en, ar']);
    assert.deepEqual(errorsOf({ gender: 'female' }), []);
    assert.deepEqual(errorsOf({ gender: 'other' }), ['gender must be one of male, female']);
    for (const loanType of [1, 8]) assert.deepEqual(errorsOf({ loanType }), []);
    for (const loanType of [0, 9, 2.5, '3']) {
      assert.deepEqual(errorsOf({ loanType }), ['loanType must be an integer from 1 to 8'], String(loanType));
    }
  });

  it('phones: array of { number, type? }', () => {
    assert.deepEqual(errorsOf({ phones: [{ number: '+971500000000', type: 'mobile' }, { number: '1' }] }), []);
    assert.deepEqual(errorsOf({ phones: 'x' }), ['phones must be an array']);
    assert.deepEqual(errorsOf({ phones: [{ type: 'work' }, 'x', { number: 5, type: 7 }] }), [
      'phones[0].number is required',
      'phones[1] must be an object',
      'phones[2].number must be a string',
      'phones[2].type must be a string',
    ]);
  });

  it('emails: array of { email (valid-looking), type? }', () => {
    assert.deepEqual(errorsOf({ emails: [{ email: 'a.b@example.com', type: 'work' }] }), []);
    assert.deepEqual(errorsOf({ emails: {} }), ['emails must be an array']);
    assert.deepEqual(errorsOf({ emails: [{}, { email: 'not-an-email' }, { email: 'a@b' }] }), [
      'emails[0].email is required',
      'emails[1].email must be a valid email address',
      'emails[2].email must be a valid email address',
    ]);
  });

  it('addresses: optional string fields, country a real ISO 3166-1 alpha-3 code', () => {
    const address = { externalId: 'u-1', street: 's', city: 'Dubai', area: 'a', zip: '1', country: 'ARE', type: 'home' };
    assert.deepEqual(errorsOf({ addresses: [address, {}, { country: 'SAU' }, { country: 'BHR' }] }), []);
    assert.deepEqual(errorsOf({ addresses: [{ country: 'AE' }, { country: 'are' }, { country: 'XXX' }, { city: 3 }, 4] }), [
      'addresses[0].country must be a valid ISO 3166-1 alpha-3 code',
      'addresses[1].country must be a valid ISO 3166-1 alpha-3 code',
      'addresses[2].country must be a valid ISO 3166-1 alpha-3 code',
      'addresses[3].city must be a string',
      'addresses[4] must be an object',
    ]);
  });

  it('the alpha-3 list is the full standard list', () => {
    assert.equal(ISO_ALPHA3_CODES.size, 249);
    for (const code of ISO_ALPHA3_CODES) assert.match(code, /^[A-Z]{3}$/);
    for (const code of ['ARE', 'SAU', 'BHR', 'USA', 'GBR', 'ZWE', 'ALA']) assert.ok(ISO_ALPHA3_CODES.has(code), code);
  });

  it('additionalData must be a plain object', () => {
    assert.deepEqual(errorsOf({ additionalData: { productType: 'bnpl', nested: { x: 1 } } }), []);
    for (const additionalData of ['x', [1], 5]) {
      assert.deepEqual(errorsOf({ additionalData }), ['additionalData must be an object']);
    }
  });

  it('normalises a full record: nested objects copied, unknown keys dropped', () => {
    const outcome = validateAccount({
      ...valid(),
      phones: [{ number: '1', extra: true }],
      emails: [{ email: 'a@b.co', type: 'work', extra: 1 }],
      addresses: [{ country: 'ARE', extra: 'x' }],
      loanType: 4,
      paidDate: '',
    });
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.value.phones, [{ number: '1' }]);
    assert.deepEqual(outcome.value.emails, [{ email: 'a@b.co', type: 'work' }]);
    assert.deepEqual(outcome.value.addresses, [{ country: 'ARE' }]);
    assert.equal(outcome.value.loanType, 4);
    assert.equal(outcome.value.paidDate, '');
  });
});

describe('account request validation', () => {
  it('body without an accounts array gets one entry with a clear message', () => {
    for (const body of [undefined, null, 'x', [], {}, { accounts: null }]) {
      assert.deepEqual(validateAccountsRequest(body), { ok: false, errors: [{ accountId: '', errors: ['accounts is required'] }] });
    }
    assert.deepEqual(validateAccountsRequest({ accounts: {} }), {
      ok: false, errors: [{ accountId: '', errors: ['accounts must be an array'] }],
    });
  });

  it('an empty accounts array is accepted with nothing to process', () => {
    assert.deepEqual(validateAccountsRequest({ accounts: [] }), { ok: true, records: [] });
  });

  it('one entry per failed accountId; failures of one accountId merge; valid records are not listed', () => {
    const result = validateAccountsRequest({
      accounts: [
        { ...valid(), accountId: 'A-1', subAccountId: 's1', firstName: '' },
        { ...valid(), accountId: 'A-2' },
        { ...valid(), accountId: 'A-1', subAccountId: 's2', principal: 'x', firstName: undefined },
        { ...valid(), accountId: 'A-3', language: 'de' },
      ],
    });
    assert.deepEqual(result, {
      ok: false,
      errors: [
        { accountId: 'A-1', errors: ['firstName is required', 'principal must be a valid number'] },
        { accountId: 'A-3', errors: ['language must be one of en, ar'] },
      ],
    });
  });

  it('records without a usable accountId are reported under ""', () => {
    const result = validateAccountsRequest({
      accounts: [{ ...valid(), accountId: undefined }, 'junk', { ...valid(), accountId: 7 }],
    });
    assert.deepEqual(result, {
      ok: false,
      errors: [{ accountId: '', errors: ['accountId is required', 'account must be an object', 'accountId must be a string'] }],
    });
  });

  it('all valid -> the normalised records in order', () => {
    const result = validateAccountsRequest({ accounts: [valid(), { ...valid(), subAccountId: 's2', status: 3 }] });
    assert.ok(result.ok);
    assert.deepEqual(result.records.map((r) => [r.subAccountId, r.status]), [['A-1-01', 1], ['s2', 3]]);
  });
});

describe('status update validation', () => {
  const known = (debtor: string, account: string): boolean => debtor === 'C-1' && account === 'A-1';

  it('accepts 5 and 6 for a known account', () => {
    const result = validateStatusUpdateRequest({
      accounts: [{ status: 5, debtorCompanyId: 'C-1', accountId: 'A-1' }, { status: 6, debtorCompanyId: 'C-1', accountId: 'A-1', x: 1 }],
    }, known);
    assert.deepEqual(result, {
      ok: true,
      records: [{ status: 5, debtorCompanyId: 'C-1', accountId: 'A-1' }, { status: 6, debtorCompanyId: 'C-1', accountId: 'A-1' }],
    });
  });

  it('any other status -> the spec sentence', () => {
    for (const status of [1, 3, 4, 7, '5', 5.5]) {
      const result = validateStatusUpdateRequest({ accounts: [{ status, debtorCompanyId: 'C-1', accountId: 'A-1' }] }, known);
      assert.deepEqual(result, { ok: false, errors: [{ accountId: 'A-1', errors: [FLAG_STATUS_MESSAGE] }] }, String(status));
    }
    assert.equal(FLAG_STATUS_MESSAGE, 'Invalid status value. Accepted values: 5, 6');
  });

  it('unknown account -> a clear entry; missing keys are reported as such, not as unknown', () => {
    const result = validateStatusUpdateRequest({
      accounts: [
        { status: 6, debtorCompanyId: 'C-2', accountId: 'A-1' },
        { status: 5, accountId: 'A-9' },
        { debtorCompanyId: 'C-1' },
      ],
    }, known);
    assert.deepEqual(result, {
      ok: false,
      errors: [
        { accountId: 'A-1', errors: ['account A-1 not found for debtor C-2'] },
        { accountId: 'A-9', errors: ['debtorCompanyId is required'] },
        { accountId: '', errors: ['status is required', 'accountId is required'] },
      ],
    });
  });

  it('body without an accounts array', () => {
    assert.deepEqual(validateStatusUpdateRequest({}, known), { ok: false, errors: [{ accountId: '', errors: ['accounts is required'] }] });
  });
});
