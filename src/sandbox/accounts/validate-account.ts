// Validation of the Account object of the accounts endpoint. Pure: a request body in, either the
// normalised records or the 400 `errors` array out.
//
// Required fields. The service documents two lists that disagree and only fixes the intersection-ish "must
// fail" set (accountId, status, debtorCompanyId, firstName, principal). The sandbox enforces that
// set plus the rest of the prose reference's list (lastName, language, subAccountId): subAccountId
// is what a record updates, so without it processing has no key; and the prose list is the one a
// lender reads. The machine schema's extras (birthDate, dateDue, phones, loanType) are optional
// here, but validated whenever sent. A client that satisfies this sandbox therefore sends every
// field either list makes mandatory for the processing to mean anything. Strict mode
// (SandboxOptions.strict) requires the union of both lists, so data that passes it passes
// whichever reading the service enforces.
//
// Error entries. One entry per failed accountId; several failing records of one accountId merge
// into one entry (duplicate messages kept once). A record whose accountId is missing or not a
// non-empty string is reported under accountId "" - such a record always fails, so a client can
// still tell that every record without a usable accountId was rejected.
import { nextTurn as defaultNextTurn, type NextTurn } from '../../core/next-turn.ts';
import { isIsoAlpha3 } from './country-codes.ts';
import {
  type Check,
  checkIntegerInRange,
  checkMoney,
  checkOneOf,
  checkOptionalDate,
  checkOptionalString,
  checkRequiredString,
  isAbsent,
  isEmailLike,
  isPlainObject,
} from './field-checks.ts';
import type {
  AccountErrorEntry,
  AccountInput,
  AccountOperation,
  AddressInput,
  EmailInput,
  PhoneInput,
  Validated,
} from './types.ts';

const ACCOUNT_STATUSES: readonly number[] = [1, 2, 3];
export const ACCOUNT_STATUS_MESSAGE = 'Invalid status value. Accepted values: 1, 2, 3';
export const LANGUAGES = ['en', 'ar'] as const;
export const GENDERS = ['male', 'female'] as const;
const ADDRESS_FIELDS = ['externalId', 'street', 'city', 'area', 'zip', 'country', 'type'] as const;
const OPTIONAL_STRINGS = ['idNumber', 'emiratesId', 'passportNumber', 'nationality', 'merchant'] as const;

export type Outcome<T> = { ok: true; value: T } | { ok: false; accountId: string; errors: string[] };

function push(errors: string[], check: Check): void {
  if (check !== undefined) errors.push(check);
}

function checkStatus(value: unknown): Check {
  if (isAbsent(value)) return 'status is required';
  return typeof value === 'number' && ACCOUNT_STATUSES.includes(value) ? undefined : ACCOUNT_STATUS_MESSAGE;
}

/** An optional array of objects: each element that is an object goes to `checkItem` with its
 * path (`phones[0]`), anything else is reported as not an object. */
function checkObjectArray(
  field: string, value: unknown, errors: string[], checkItem: (item: Record<string, unknown>, at: string) => void,
): void {
  if (isAbsent(value)) return;
  if (!Array.isArray(value)) return void errors.push(`${field} must be an array`);
  value.forEach((item: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isPlainObject(item)) return void errors.push(`${at} must be an object`);
    checkItem(item, at);
  });
}

function checkPhones(value: unknown, errors: string[]): void {
  checkObjectArray('phones', value, errors, (phone, at) => {
    push(errors, checkRequiredString(`${at}.number`, phone.number));
    push(errors, checkOptionalString(`${at}.type`, phone.type));
  });
}

function checkEmails(value: unknown, errors: string[]): void {
  checkObjectArray('emails', value, errors, (email, at) => {
    const missing = checkRequiredString(`${at}.email`, email.email);
    if (missing !== undefined) errors.push(missing);
    else if (!isEmailLike(email.email as string)) errors.push(`${at}.email must be a valid email address`);
    push(errors, checkOptionalString(`${at}.type`, email.type));
  });
}

function checkAddresses(value: unknown, errors: string[]): void {
  checkObjectArray('addresses', value, errors, (address, at) => {
    for (const field of ADDRESS_FIELDS) push(errors, checkOptionalString(`${at}.${field}`, address[field]));
    const country = address.country;
    if (typeof country === 'string' && !isIsoAlpha3(country)) {
      errors.push(`${at}.country must be a valid ISO 3166-1 alpha-3 code`);
    }
  });
}

/** The record's own errors, in the documented field order of the Account object. */
export function accountErrors(raw: Record<string, unknown>, strict = false): string[] {
  const errors: string[] = [];
  push(errors, checkStatus(raw.status));
  push(errors, checkRequiredString('debtorCompanyId', raw.debtorCompanyId));
  push(errors, checkRequiredString('firstName', raw.firstName));
  push(errors, checkRequiredString('lastName', raw.lastName));
  // language is required (prose list): absent or blank is "required", anything else not en/ar
  // is the enum message.
  const language = raw.language;
  if (isAbsent(language) || language === '') errors.push('language is required');
  else push(errors, checkOneOf('language', language, LANGUAGES));
  push(errors, checkOptionalString('idNumber', raw.idNumber));
  push(errors, checkOptionalString('emiratesId', raw.emiratesId));
  push(errors, checkOptionalString('passportNumber', raw.passportNumber));
  if (strict && isAbsent(raw.birthDate)) errors.push('birthDate is required');
  push(errors, checkOptionalDate('birthDate', raw.birthDate));
  push(errors, checkOneOf('gender', raw.gender, GENDERS));
  push(errors, checkOptionalString('nationality', raw.nationality));
  if (strict && isAbsent(raw.phones)) errors.push('phones is required');
  checkPhones(raw.phones, errors);
  checkEmails(raw.emails, errors);
  checkAddresses(raw.addresses, errors);
  push(errors, checkRequiredString('accountId', raw.accountId));
  push(errors, checkRequiredString('subAccountId', raw.subAccountId));
  push(errors, checkOptionalString('merchant', raw.merchant));
  if (strict && isAbsent(raw.dateDue)) errors.push('dateDue is required');
  push(errors, checkOptionalDate('dateDue', raw.dateDue));
  push(errors, checkMoney('principal', raw.principal, true));
  push(errors, checkMoney('interest', raw.interest, false));
  push(errors, checkMoney('fees', raw.fees, false));
  push(errors, checkMoney('paidAmount', raw.paidAmount, false));
  push(errors, checkOptionalDate('paidDate', raw.paidDate, true));
  if (!isAbsent(raw.additionalData) && !isPlainObject(raw.additionalData)) {
    errors.push('additionalData must be an object');
  }
  if (strict && isAbsent(raw.loanType)) errors.push('loanType is required');
  push(errors, checkIntegerInRange('loanType', raw.loanType, 1, 8));
  return errors;
}

function pickString(raw: Record<string, unknown>, field: string): string | undefined {
  const value = raw[field];
  return typeof value === 'string' ? value : undefined;
}

function normalizePhones(value: unknown): PhoneInput[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((p: Record<string, unknown>) =>
    typeof p.type === 'string' ? { number: p.number as string, type: p.type } : { number: p.number as string },
  );
}

function normalizeEmails(value: unknown): EmailInput[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((e: Record<string, unknown>) =>
    typeof e.type === 'string' ? { email: e.email as string, type: e.type } : { email: e.email as string },
  );
}

function normalizeAddresses(value: unknown): AddressInput[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.map((a: Record<string, unknown>) => {
    const address: Record<string, string> = {};
    for (const field of ADDRESS_FIELDS) {
      const v = a[field];
      if (typeof v === 'string') address[field] = v;
    }
    return address;
  });
}

/** Copies only the known fields of an already valid record, so unknown keys never reach state. */
function normalize(raw: Record<string, unknown>): AccountInput {
  const record: Record<string, unknown> = {
    status: raw.status as AccountOperation,
    debtorCompanyId: raw.debtorCompanyId,
    accountId: raw.accountId,
    subAccountId: raw.subAccountId,
    firstName: raw.firstName,
    lastName: raw.lastName,
    language: raw.language,
    principal: raw.principal,
  };
  for (const field of [
    ...OPTIONAL_STRINGS, 'birthDate', 'gender', 'dateDue', 'interest', 'fees', 'paidAmount', 'paidDate',
  ]) {
    const value = pickString(raw, field);
    if (value !== undefined) record[field] = value;
  }
  const phones = normalizePhones(raw.phones);
  if (phones) record.phones = phones;
  const emails = normalizeEmails(raw.emails);
  if (emails) record.emails = emails;
  const addresses = normalizeAddresses(raw.addresses);
  if (addresses) record.addresses = addresses;
  if (isPlainObject(raw.additionalData)) record.additionalData = raw.additionalData;
  if (typeof raw.loanType === 'number') record.loanType = raw.loanType;
  return record as unknown as AccountInput;
}

/** The accountId a failed record is reported under (see the header comment). */
function errorAccountId(raw: unknown): string {
  if (!isPlainObject(raw)) return '';
  const id = raw.accountId;
  return typeof id === 'string' && id.trim() !== '' ? id : '';
}

/** One element of `accounts`, for either endpoint: its errors, or the record `build` makes of it. */
export function validateRecord<T>(
  raw: unknown,
  errorsOf: (raw: Record<string, unknown>) => string[],
  build: (raw: Record<string, unknown>) => T,
): Outcome<T> {
  if (!isPlainObject(raw)) return { ok: false, accountId: '', errors: ['account must be an object'] };
  const errors = errorsOf(raw);
  if (errors.length > 0) return { ok: false, accountId: errorAccountId(raw), errors };
  return { ok: true, value: build(raw) };
}

export function validateAccount(raw: unknown): Outcome<AccountInput> {
  return validateRecord(raw, accountErrors, normalize);
}

/** validateAccount that also requires birthDate, dateDue, phones and loanType. */
export function validateAccountStrict(raw: unknown): Outcome<AccountInput> {
  return validateRecord(raw, (r) => accountErrors(r, true), normalize);
}

/** The outcomes of one request's elements, in order: every record while all pass; once one fails,
 * only the failures, folded as they come into one entry per accountId (in order of first failure),
 * so a body of a million failing elements holds one entry, not a million. */
class RequestOutcomes<T> {
  readonly #records: T[] = [];
  readonly #failures = new Map<string, Set<string>>();

  add(outcome: Outcome<T>): void {
    if (outcome.ok) {
      if (this.#failures.size === 0) this.#records.push(outcome.value);
      return;
    }
    if (this.#failures.size === 0) this.#records.length = 0;
    let messages = this.#failures.get(outcome.accountId);
    if (!messages) this.#failures.set(outcome.accountId, (messages = new Set()));
    for (const message of outcome.errors) messages.add(message);
  }

  result(): Validated<T> {
    if (this.#failures.size === 0) return { ok: true, records: this.#records };
    return { ok: false, errors: [...this.#failures].map(([accountId, messages]) => ({ accountId, errors: [...messages] })) };
  }
}

/** The request-level check shared by both account endpoints: `{ accounts: [...] }`. */
function readAccountsArray(body: unknown): { ok: true; items: readonly unknown[] } | { ok: false; errors: AccountErrorEntry[] } {
  if (!isPlainObject(body) || isAbsent(body.accounts)) {
    return { ok: false, errors: [{ accountId: '', errors: ['accounts is required'] }] };
  }
  if (!Array.isArray(body.accounts)) {
    return { ok: false, errors: [{ accountId: '', errors: ['accounts must be an array'] }] };
  }
  return { ok: true, items: body.accounts };
}

/** A whole request body of either endpoint: every element through `validateOne`; all records
 * when every element passed, otherwise the failures merged per accountId. */
export function validateRequest<T>(body: unknown, validateOne: (raw: unknown) => Outcome<T>): Validated<T> {
  const read = readAccountsArray(body);
  if (!read.ok) return read;
  const outcomes = new RequestOutcomes<T>();
  for (const item of read.items) outcomes.add(validateOne(item));
  return outcomes.result();
}

/** Elements validated per turn of the event loop by validateRequestInSlices: about 10 ms of
 * work for full records on a slow machine. */
export const VALIDATION_SLICE = 1000;

export interface SliceOptions {
  readonly sliceSize?: number;
  readonly nextTurn?: NextTurn;
}

/** validateRequest for a request of any size: `sliceSize` elements at a time with `nextTurn`
 * between them, so a body of hundreds of thousands of elements never holds up other clients. */
export async function validateRequestInSlices<T>(
  body: unknown, validateOne: (raw: unknown) => Outcome<T>, options: SliceOptions = {},
): Promise<Validated<T>> {
  const read = readAccountsArray(body);
  if (!read.ok) return read;
  const { sliceSize = VALIDATION_SLICE, nextTurn = defaultNextTurn } = options;
  const outcomes = new RequestOutcomes<T>();
  const items = read.items;
  for (let start = 0; start < items.length; start += sliceSize) {
    if (start > 0) await nextTurn();
    const end = Math.min(items.length, start + sliceSize);
    for (let i = start; i < end; i++) outcomes.add(validateOne(items[i]));
  }
  return outcomes.result();
}

/** Validates a whole request body. An empty `accounts` array is valid and queues nothing: the
 * service does not forbid it, and a client flushing an empty batch should not see a failure. */
export function validateAccountsRequest(body: unknown): Validated<AccountInput> {
  return validateRequest(body, validateAccount);
}
