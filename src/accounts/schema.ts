// zod schemas of the service's Account (with Phone, Email, Address) and Account status update objects.
//
// Messages follow the service's style ("firstName is required", "principal must be a valid
// number"), so a record refused here reads the same as one the service refused. Each schema
// error carries the text after the field name; formatIssue() puts the field path in front
// ("phones[0].number is required"), since array indices are only known at parse time.
//
// Required fields. The service documents two lists that disagree. The default enforces what the service is
// known to enforce: the must-fail set (accountId, status, debtorCompanyId, firstName, principal)
// plus the rest of the prose list (lastName, language, subAccountId). `strict` also enforces the
// machine-readable schema's extras (birthDate, dateDue, phones, loanType).
//
// Deliberately not checked: the format of an email address. The service documents no rule for it, so any
// judgement here could refuse an address the service takes; the service's 400 reports it instead.
//
// null counts as absent, as JSON serialisers commonly write an absent optional field as null.
//
// Nesting: the validate* functions refuse a record nested more than MAX_RECORD_DEPTH levels
// (nesting.ts) before anything else, on both the fast path and zod's, because such a record cannot
// be serialised safely; the zod schemas themselves have no such rule (zod cannot say it cheaply).
import { z } from 'zod';
import { isIsoAlpha3 } from './countries.ts';
import { ACCOUNT_OPERATIONS, EXACT_DIGITS, FLAG_OPERATIONS, isInexactNumber, normalizeAccount, normalizeStatusUpdate } from './normalize.ts';
import { isNestedDeeperThan, MAX_RECORD_DEPTH, TOO_DEEP_MESSAGE } from './nesting.ts';
import { isMoneyString, isServiceDate } from './schema-rules.ts';
import { isWireAccount } from './wire-check.ts';

export { MAX_MONEY_LENGTH, isMoneyString, isServiceDate } from './schema-rules.ts';

// The service's sentence, plus the word forms this library also takes (normalize.ts):
// 'Invalid status value. Accepted values: 5, 6 (or "disputed", "doNotContact")'.
const statusMessage = (operations: Readonly<Record<string, number>>): string =>
  `Invalid status value. Accepted values: ${Object.values(operations).join(', ')} ` +
  `(or ${Object.keys(operations).map((name) => `"${name}"`).join(', ')})`;
export const ACCOUNT_STATUS_MESSAGE = statusMessage(ACCOUNT_OPERATIONS);
export const FLAG_STATUS_MESSAGE = statusMessage(FLAG_OPERATIONS);
export const NOT_AN_OBJECT_MESSAGE = 'account must be an object';

/** Messages that are whole sentences, not "<field> ..." tails. */
const WHOLE_MESSAGES = new Set([ACCOUNT_STATUS_MESSAGE, FLAG_STATUS_MESSAGE, NOT_AN_OBJECT_MESSAGE]);

const REQUIRED = 'is required';
const NOT_A_STRING = 'must be a string';
const NOT_A_DATE = 'must be a valid date in dd/MM/yyyy format';
const NOT_A_NUMBER = 'must be a valid number';
// What toDecimalString (normalize.ts) leaves a number for; any other number reaches the schema
// only when it is used directly, without the normalising.
const INEXACT_NUMBER = `is a number with more than ${EXACT_DIGITS} significant digits, which JSON numbers do not keep exactly; give it as a string`;
const NUMBER_NOT_TEXT = 'must be a string holding a decimal, such as "100.50"';

function moneyMessage(input: unknown): string {
  if (isInexactNumber(input)) return INEXACT_NUMBER;
  return typeof input === 'number' && Number.isFinite(input) ? NUMBER_NOT_TEXT : NOT_A_NUMBER;
}

const absent = (input: unknown): boolean => input === undefined || input === null;

// ---- field builders

function requiredString() {
  return z
    .string({ error: (iss) => (absent(iss.input) ? REQUIRED : NOT_A_STRING) })
    .refine((value) => value.trim() !== '', { error: REQUIRED });
}

function optionalString() {
  return z.string({ error: NOT_A_STRING }).nullish();
}

function date(opts: { required: boolean; allowEmpty?: boolean }) {
  const base = z
    .string({ error: (iss) => (absent(iss.input) ? REQUIRED : NOT_A_DATE) })
    .refine((value) => (opts.allowEmpty === true && value === '') || isServiceDate(value), { error: NOT_A_DATE });
  return opts.required ? base : base.nullish();
}

function money(required: boolean) {
  const base = z
    .string({ error: (iss) => (absent(iss.input) ? REQUIRED : moneyMessage(iss.input)) })
    .superRefine((value, ctx) => {
      if (required && value === '') ctx.addIssue({ code: 'custom', message: REQUIRED });
      else if (!isMoneyString(value)) ctx.addIssue({ code: 'custom', message: NOT_A_NUMBER });
    });
  return required ? base : base.nullish();
}

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` }).nullish();
}

function array<T extends z.ZodType>(element: T, required: boolean) {
  const base = z.array(element, { error: (iss) => (absent(iss.input) ? REQUIRED : 'must be an array') });
  return required ? base : base.nullish();
}

function loanType(required: boolean) {
  const base = z
    .number({ error: (iss) => (absent(iss.input) ? REQUIRED : 'must be an integer from 1 to 8') })
    .int({ error: 'must be an integer from 1 to 8' })
    .min(1, { error: 'must be an integer from 1 to 8' })
    .max(8, { error: 'must be an integer from 1 to 8' });
  return required ? base : base.nullish();
}

const objectError = { error: 'must be an object' };

// ---- object schemas

export const phoneSchema = z.looseObject({ number: requiredString(), type: optionalString() }, objectError);

export const emailSchema = z.looseObject({ email: requiredString(), type: optionalString() }, objectError);

export const addressSchema = z.looseObject(
  {
    externalId: optionalString(),
    street: optionalString(),
    city: optionalString(),
    area: optionalString(),
    zip: optionalString(),
    country: z
      .string({ error: NOT_A_STRING })
      .refine(isIsoAlpha3, { error: 'must be a valid ISO 3166-1 alpha-3 code' })
      .nullish(),
    type: optionalString(),
  },
  objectError,
);

const additionalData = z
  .record(z.string(), z.unknown(), { error: (iss) => (absent(iss.input) ? REQUIRED : 'must be an object') })
  .nullish();

function accountShape(strict: boolean) {
  return {
    status: z.literal([1, 2, 3], { error: (iss) => (absent(iss.input) ? REQUIRED : ACCOUNT_STATUS_MESSAGE) }),
    debtorCompanyId: requiredString(),
    firstName: requiredString(),
    lastName: requiredString(),
    language: z.enum(['en', 'ar'], {
      error: (iss) => (absent(iss.input) || iss.input === '' ? REQUIRED : 'must be one of en, ar'),
    }),
    idNumber: optionalString(),
    emiratesId: optionalString(),
    passportNumber: optionalString(),
    birthDate: date({ required: strict }),
    gender: oneOf(['male', 'female']),
    nationality: optionalString(),
    phones: array(phoneSchema, strict),
    emails: array(emailSchema, false),
    addresses: array(addressSchema, false),
    accountId: requiredString(),
    subAccountId: requiredString(),
    merchant: optionalString(),
    dateDue: date({ required: strict }),
    principal: money(true),
    interest: money(false),
    fees: money(false),
    paidAmount: money(false),
    paidDate: date({ required: false, allowEmpty: true }),
    additionalData,
    loanType: loanType(strict),
  };
}

/**
 * The zod schema of an account record in wire form, as the account writer validates it. Unknown
 * fields are kept: the service may know fields its documentation does not list.
 */
export const accountSchema = z.looseObject(accountShape(false), { error: NOT_AN_OBJECT_MESSAGE });
/** {@link accountSchema} that also requires the machine-readable schema's birthDate, dateDue, phones and loanType (`strict: true`). */
export const strictAccountSchema = z.looseObject(accountShape(true), { error: NOT_AN_OBJECT_MESSAGE });

/** The zod schema of a flag record (status 5 disputed or 6 do-not-contact), as the flag writer validates it. */
export const statusUpdateSchema = z.looseObject(
  {
    status: z.literal([5, 6], { error: (iss) => (absent(iss.input) ? REQUIRED : FLAG_STATUS_MESSAGE) }),
    debtorCompanyId: requiredString(),
    accountId: requiredString(),
  },
  { error: NOT_AN_OBJECT_MESSAGE },
);

// ---- types

/** A valid account record in wire form, as sent to the service. */
export type Account = z.output<typeof accountSchema>;
/** A status-update record in wire form. */
export type StatusUpdate = z.output<typeof statusUpdateSchema>;

type DateInput = string | Date;
type MoneyInput = string | number;
type Friendly<T, Overrides> = Omit<T, keyof Overrides> & Overrides;

/** What a caller may write: wire form, or friendly values that normalise unambiguously. */
export type AccountInput = Friendly<
  z.input<typeof accountSchema>,
  {
    status: 1 | 2 | 3 | 'create' | 'update' | 'withdraw';
    principal: MoneyInput;
    interest?: MoneyInput | null;
    fees?: MoneyInput | null;
    paidAmount?: MoneyInput | null;
    birthDate?: DateInput | null;
    dateDue?: DateInput | null;
    paidDate?: DateInput | null;
  }
>;
/** What a caller may write as a flag record: wire form, or the status by name (`'disputed'`, `'doNotContact'`). */
export type StatusUpdateInput = Friendly<z.input<typeof statusUpdateSchema>, { status: 5 | 6 | 'disputed' | 'doNotContact' }>;

// ---- validation

/** The verdict of a validation: the value to send, or the reasons it would be refused, worded as the service words them. */
export type Validation<T> = { ok: true; value: T } | { ok: false; errors: string[] };

function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) {
    if (typeof part === 'number') text += `[${part}]`;
    else text += text === '' ? String(part) : `.${String(part)}`;
  }
  return text;
}

/** One issue as the service would word it. */
export function formatIssue(issue: { path: readonly PropertyKey[]; message: string }): string {
  if (WHOLE_MESSAGES.has(issue.message) || issue.path.length === 0) return issue.message;
  return `${formatPath(issue.path)} ${issue.message}`;
}

// The fields are checked, and JSON.stringify would send what an object's own toJSON returns
// instead: refused, so that what is sent is always what was checked.
const OWN_TO_JSON_MESSAGE = 'toJSON: the record, or an object in it, has a toJSON method of its own, whose result would be sent instead of what was checked; give the fields as they are';

/** Why a record cannot be checked and sent as it is (too deep, an own toJSON), in one walk. */
function shapeRefusal(input: unknown): string | undefined {
  const notes = { ownToJson: false };
  if (isNestedDeeperThan(input, MAX_RECORD_DEPTH, notes)) return TOO_DEEP_MESSAGE;
  return notes.ownToJson ? OWN_TO_JSON_MESSAGE : undefined;
}

function run<T>(schema: z.ZodType<T>, record: unknown): Validation<T> {
  const result = schema.safeParse(record);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, errors: result.error.issues.map(formatIssue) };
}

/** Options of {@link validateAccount}. */
export interface AccountValidationOptions {
  /** Also require the machine-readable schema's fields: birthDate, dateDue, phones, loanType. */
  strict?: boolean;
}

/** Normalises an account record, then validates it as the account writer would; on success `value` is what to send (a new object). */
export function validateAccount(input: unknown, opts: AccountValidationOptions = {}): Validation<Account> {
  const result = validateAccountForSend(input, opts);
  // A shallow copy stands for zod's output, a new object equal to the input, so a caller may
  // change the value without touching what it passed in.
  return result.ok && result.value === input ? { ok: true, value: { ...result.value } } : result;
}

/**
 * validateAccount for callers that serialise the value at once (the account writer): a valid
 * record already in wire form comes back as the very object given, not a copy, sparing an
 * allocation per record. Verdicts and messages are validateAccount's.
 */
export function validateAccountForSend(input: unknown, opts: AccountValidationOptions = {}): Validation<Account> {
  const strict = opts.strict === true;
  // First, and ahead of the wire-form fast path: that path says yes without looking inside
  // additionalData or unknown fields, and the writer serialises whatever it says yes to.
  const refusal = shapeRefusal(input);
  if (refusal !== undefined) return { ok: false, errors: [refusal] };
  const record = normalizeAccount(input);
  // Plain wire-form records (most of them) skip zod's parse; anything else, and every refusal,
  // is zod's (wire-check.ts never says no).
  if (isWireAccount(record, strict)) return { ok: true, value: record as Account };
  return run(strict ? strictAccountSchema : accountSchema, record);
}

/** Normalises a flag record, then validates it as the flag writer would; on success `value` is what to send. */
export function validateStatusUpdate(input: unknown): Validation<StatusUpdate> {
  // The schema keeps unknown fields, so a status update can carry a deep value too.
  const refusal = shapeRefusal(input);
  if (refusal !== undefined) return { ok: false, errors: [refusal] };
  return run(statusUpdateSchema, normalizeStatusUpdate(input));
}
