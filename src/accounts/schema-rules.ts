// The value rules the account schema is built from (dates, money), as plain functions: shared by
// the zod schema (schema.ts) and the wire-form fast check (wire-check.ts) so both apply the very
// same test.
import { DateTime } from 'luxon';

/** Longest money string accepted, as the service bounds it. */
export const MAX_MONEY_LENGTH = 64;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;
const SLASH = 0x2f;
const ZERO = 0x30;

/** Plain decimal notation, as the service reads money: no exponent, no spaces, no grouping. */
export function isMoneyString(value: string): boolean {
  return value.length <= MAX_MONEY_LENGTH && DECIMAL.test(value);
}

// Days per month by year*12+month. Building a luxon DateTime per date was the largest single cost
// of validating a record; a month's length is all the check needs, and there are few months.
const monthLengths = new Map<number, number>();

function daysInMonth(year: number, month: number): number {
  const key = year * 12 + month;
  let days = monthLengths.get(key);
  if (days === undefined) {
    days = DateTime.utc(year, month, 1).daysInMonth ?? 0;
    monthLengths.set(key, days);
  }
  return days;
}

/** dd/MM/yyyy naming a real calendar day (31/02/2024 is not one). */
export function isServiceDate(value: string): boolean {
  // By character codes rather than a regex with capture groups: this runs for every date of every
  // record written, and the match array and its strings were garbage per call. Same rule as
  // /^(\d{2})\/(\d{2})\/(\d{4})$/: exactly ten characters, ASCII digits and two slashes.
  if (value.length !== 10 || value.charCodeAt(2) !== SLASH || value.charCodeAt(5) !== SLASH) return false;
  const day = digits(value, 0, 2);
  const month = digits(value, 3, 5);
  const year = digits(value, 6, 10);
  if (day < 0 || month < 0 || year < 0) return false;
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

/** The number written in value[from, to) as ASCII digits, or -1 if any character is not one. */
function digits(value: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = value.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}
