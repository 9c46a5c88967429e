// Friendly input turned into the service's wire form before validation, only where the meaning is
// unambiguous: a Date or ISO date is one calendar day, a finite number is one decimal, a named
// operation is one status code. Anything else is left as it is, so validation reports it in the
// service's words instead of this module guessing.
import { DateTime } from 'luxon';

export const DATE_FIELDS = ['birthDate', 'dateDue', 'paidDate'] as const;
export const MONEY_FIELDS = ['principal', 'interest', 'fees', 'paidAmount'] as const;

export const ACCOUNT_OPERATIONS = { create: 1, update: 2, withdraw: 3 } as const;
export const FLAG_OPERATIONS = { disputed: 5, doNotContact: 6 } as const;

export type AccountOperationName = keyof typeof ACCOUNT_OPERATIONS;
export type FlagOperationName = keyof typeof FLAG_OPERATIONS;

const SERVICE_DATE = 'dd/MM/yyyy';
// Date-only or date-time ISO 8601; the day is the one written, whatever the time and offset.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;
const INTEGER_TEXT = /^\d{1,2}$/;

/**
 * A JS Date or ISO 8601 string as the service's dd/MM/yyyy; any other value unchanged. These are
 * calendar days (a birth date, a due date), so:
 * - an ISO string gives the day it names, whatever its time and offset
 *   (`1990-05-01T00:00:00+04:00` is 01/05/1990, not the UTC day before);
 * - a Date at the start of a day in this process's time zone (what database drivers make of a DATE
 *   column) gives that local day, and any other Date (`new Date('1990-05-01')` is UTC midnight)
 *   its UTC day.
 */
export function toServiceDate(value: unknown): unknown {
  if (value instanceof Date) {
    const utc = DateTime.fromJSDate(value, { zone: 'utc' });
    if (!utc.isValid) return value;
    const local = DateTime.fromJSDate(value);
    return (startsItsDay(local) && !startsItsDay(utc) ? local : utc).toFormat(SERVICE_DATE);
  }
  // charCodeAt(4) === '-' first: wire-form dd/MM/yyyy dates (nearly all) skip the regex.
  if (typeof value === 'string' && value.charCodeAt(4) === 45 && ISO_DATE.test(value)) {
    // setZone: the offset written is kept, so the day is the one written.
    const date = DateTime.fromISO(value.replace(' ', 'T'), { zone: 'utc', setZone: true });
    return date.isValid ? date.toFormat(SERVICE_DATE) : value;
  }
  return value;
}

/** The first instant of its day: midnight, or where clocks spring forward at midnight (Beirut,
 * some years) the hour after, which is where `new Date(y, m, d)` lands. */
function startsItsDay(date: DateTime): boolean {
  return date.toMillis() === date.startOf('day').toMillis();
}

/** Significant digits a double keeps exactly, whatever decimal text it was read from. */
export const EXACT_DIGITS = 15;

/**
 * A finite number whose shortest form needs more than EXACT_DIGITS significant digits: the text
 * it was parsed from may have held other digits (12345678901234567.89 reads as
 * 12345678901234568), or it is a sum's rounding (0.1 + 0.2), not an amount anyone meant. What
 * rounds to a short number (100000000000000000001 reads as 1e20) cannot be told from here.
 */
export function isInexactNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && significantDigits(String(value)) > EXACT_DIGITS;
}

/** A finite number as a plain decimal string (never exponent notation, which the service refuses),
 * with the digits JavaScript writes for it: 1.5e-21 is 0.0000000000000000000015, not 0. An
 * inexact one (isInexactNumber) is left a number, which the schema refuses saying why. */
export function toDecimalString(value: unknown): unknown {
  if (typeof value !== 'number' || !Number.isFinite(value)) return value;
  const text = String(value);
  if (significantDigits(text) > EXACT_DIGITS) return value; // inexact (isInexactNumber)
  const exponent = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (exponent === null) return text;
  // JavaScript's exponent form has one digit before its point: move the point by the exponent.
  const [, sign, first, rest = '', power] = exponent;
  const digits = `${first}${rest}`;
  const point = 1 + Number(power);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Digits of a number as String() writes it, without its sign, exponent and leading or (in an
 * integer) trailing zeros. */
function significantDigits(text: string): number {
  const mantissa = text.replace(/^-/, '').replace(/e.*$/, '');
  const digits = mantissa.replace('.', '').replace(/^0+/, '');
  return (mantissa.includes('.') ? digits : digits.replace(/0+$/, '')).length;
}

/** Small integer codes sent as text ("2") become numbers; the service wants JSON integers. */
function toSmallInteger(value: unknown): unknown {
  return typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : value;
}

function toOperation(value: unknown, names: Readonly<Record<string, number>>): unknown {
  if (typeof value === 'string' && Object.hasOwn(names, value)) return names[value];
  return toSmallInteger(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** The account record in wire form; non-objects are returned unchanged. The input is never
 * mutated, because callers may still hold (and log) what they wrote: a record that needs a change
 * is copied, one already in wire form is returned as it is (most are; copying them all showed up
 * as garbage-collection time). */
export function normalizeAccount(input: unknown): unknown {
  if (!isPlainObject(input)) return input;
  // A plain loop over the fields rather than a per-call helper closure: this runs once per record
  // written, and a closure per call (plus tsx's keepNames wrapper around it) showed in profiles.
  let record: Record<string, unknown> | undefined;
  const status = toOperation(input.status, ACCOUNT_OPERATIONS);
  if (status !== input.status) (record ??= { ...input }).status = status;
  for (const field of DATE_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    const normal = toServiceDate(value);
    if (normal !== value) (record ??= { ...input })[field] = normal;
  }
  for (const field of MONEY_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    const normal = toDecimalString(value);
    if (normal !== value) (record ??= { ...input })[field] = normal;
  }
  const loanType = input.loanType;
  if (loanType !== undefined) {
    const normal = toSmallInteger(loanType);
    if (normal !== loanType) (record ??= { ...input }).loanType = normal;
  }
  return record ?? input;
}

/** A copy of a status-update record in wire form; non-objects are returned unchanged. */
export function normalizeStatusUpdate(input: unknown): unknown {
  if (!isPlainObject(input)) return input;
  return { ...input, status: toOperation(input.status, FLAG_OPERATIONS) };
}
