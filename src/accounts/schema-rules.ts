// The value rules the account schema is built from (dates, money), as plain functions: shared by
// the zod schema (schema.ts) and the wire-form fast check (wire-check.ts) so both apply the very
// same test.
import { DateTime } from 'luxon';

/** Longest money string accepted, as the service bounds it. */
export const MAX_MONEY_LENGTH = 64;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;
const SERVICE_DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;

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
  const match = SERVICE_DATE.exec(value);
  if (match === null) return false;
  const day = Number(match[1]);
  const month = Number(match[2]);
  const year = Number(match[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}
