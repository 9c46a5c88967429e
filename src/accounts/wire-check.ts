// A fast yes for account records that are already plain wire form (what NDJSON sources and most
// callers write). It never says no: anything it is not certain the zod schema accepts exactly as
// it is goes to zod (schema.ts), which decides and words the messages. So a verdict or a message
// can never differ from the schema's; this only skips zod's per-field parse, which was most of
// the writer's CPU per record.
//
// "Certain" means: every object is a plain object (Object.prototype) or array literal, none has an
// own "__proto__" key (zod drops those, JSON.stringify would not), and every field the schema knows
// passes the same test the schema applies. Unknown fields pass through, as in the loose schema.
// The property test in test/accounts/wire-check.test.ts holds this to the schema.
//
// It does not look inside additionalData or unknown fields, so it cannot see a record nested too
// deeply to serialise: validateAccountForSend checks the depth (nesting.ts) before calling it.
import { isIsoAlpha3 } from './countries.ts';
import { isMoneyString, isServiceDate } from './schema-rules.ts';

type Json = Record<string, unknown>;

const OBJECT_PROTO = Object.prototype;
const hasOwn = Object.hasOwn;

function isPlain(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === OBJECT_PROTO && !hasOwn(value, '__proto__');
}

const absent = (v: unknown): boolean => v === undefined || v === null;

function requiredString(v: unknown): boolean {
  return typeof v === 'string' && v.trim() !== '';
}

function optionalString(v: unknown): boolean {
  return v === undefined || v === null || typeof v === 'string';
}

function optionalDate(v: unknown): boolean {
  return absent(v) || (typeof v === 'string' && isServiceDate(v));
}

function optionalMoney(v: unknown): boolean {
  return absent(v) || (typeof v === 'string' && isMoneyString(v));
}

function phone(v: unknown): boolean {
  return isPlain(v) && requiredString(v.number) && optionalString(v.type);
}

function email(v: unknown): boolean {
  return isPlain(v) && requiredString(v.email) && optionalString(v.type);
}

function address(v: unknown): boolean {
  return (
    isPlain(v) &&
    optionalString(v.externalId) && optionalString(v.street) && optionalString(v.city) && optionalString(v.area) &&
    optionalString(v.zip) && optionalString(v.type) &&
    (absent(v.country) || (typeof v.country === 'string' && isIsoAlpha3(v.country)))
  );
}

function arrayOf(v: unknown, element: (e: unknown) => boolean): boolean {
  if (!Array.isArray(v) || Object.getPrototypeOf(v) !== Array.prototype) return false;
  // A hole reads as undefined, which no element test accepts (zod refuses holes too).
  for (let i = 0; i < v.length; i++) if (!element(v[i])) return false;
  return true;
}

function loanType(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 8;
}

/**
 * True when `record` (already normalised) is certainly accepted by the account schema as it is,
 * so its JSON is what the schema's output would serialise to (up to key order). False means
 * "ask zod", not "invalid".
 */
export function isWireAccount(record: unknown, strict: boolean): record is Json {
  if (!isPlain(record)) return false;
  const r = record;
  const status = r.status;
  if (status !== 1 && status !== 2 && status !== 3) return false;
  if (r.language !== 'en' && r.language !== 'ar') return false;
  if (
    !requiredString(r.debtorCompanyId) || !requiredString(r.firstName) || !requiredString(r.lastName) ||
    !requiredString(r.accountId) || !requiredString(r.subAccountId)
  ) return false;
  if (typeof r.principal !== 'string' || !isMoneyString(r.principal)) return false;
  if (!optionalMoney(r.interest) || !optionalMoney(r.fees) || !optionalMoney(r.paidAmount)) return false;
  if (
    !optionalString(r.idNumber) || !optionalString(r.emiratesId) || !optionalString(r.passportNumber) ||
    !optionalString(r.nationality) || !optionalString(r.merchant)
  ) return false;
  if (!absent(r.gender) && r.gender !== 'male' && r.gender !== 'female') return false;
  const paidDate = r.paidDate;
  if (!absent(paidDate) && !(typeof paidDate === 'string' && (paidDate === '' || isServiceDate(paidDate)))) return false;
  if (strict) {
    if (typeof r.birthDate !== 'string' || !isServiceDate(r.birthDate)) return false;
    if (typeof r.dateDue !== 'string' || !isServiceDate(r.dateDue)) return false;
    if (!arrayOf(r.phones, phone)) return false;
    if (!loanType(r.loanType)) return false;
  } else {
    if (!optionalDate(r.birthDate) || !optionalDate(r.dateDue)) return false;
    if (!absent(r.phones) && !arrayOf(r.phones, phone)) return false;
    if (!absent(r.loanType) && !loanType(r.loanType)) return false;
  }
  if (!absent(r.emails) && !arrayOf(r.emails, email)) return false;
  if (!absent(r.addresses) && !arrayOf(r.addresses, address)) return false;
  const data = r.additionalData;
  // The schema's record refuses symbol keys; JSON would silently drop them.
  if (!absent(data) && !(isPlain(data) && Object.getOwnPropertySymbols(data).length === 0)) return false;
  return true;
}
