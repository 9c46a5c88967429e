// Small checks behind the validators. Each returns a message in the service's style ("firstName is
// required", "principal must be a valid number") or undefined when the value is fine, so the
// validators stay a flat list of field rules.
import { isDecimalString } from './decimal.ts';

export type Check = string | undefined;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON null is read as "not sent": clients commonly serialise an absent optional field as null. */
export function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** A blank string carries no identifier or name, so a required field holding one is missing. */
export function checkRequiredString(field: string, value: unknown): Check {
  if (isAbsent(value)) return `${field} is required`;
  if (typeof value !== 'string') return `${field} must be a string`;
  if (value.trim() === '') return `${field} is required`;
  return undefined;
}

export function checkOptionalString(field: string, value: unknown): Check {
  if (isAbsent(value) || typeof value === 'string') return undefined;
  return `${field} must be a string`;
}

const DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;

function daysInMonth(year: number, month: number): number {
  // Day 0 of the next month is the last day of this one; UTC avoids any local DST edge.
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** dd/MM/yyyy naming a real calendar date (31/02/2024 is not one). */
export function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const day = Number(match[1]);
  const month = Number(match[2]);
  const year = Number(match[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

const dateMessage = (field: string): string => `${field} must be a valid date in dd/MM/yyyy format`;

/** Any value that is not a dd/MM/yyyy string, whatever its JSON type, gets the format message:
 * it tells the sender what to send, which "must be a string" would only half do. */
export function checkOptionalDate(field: string, value: unknown, allowEmpty = false): Check {
  if (isAbsent(value)) return undefined;
  if (typeof value === 'string') {
    if (allowEmpty && value === '') return undefined;
    if (isCalendarDate(value)) return undefined;
  }
  return dateMessage(field);
}

/** Money is a string holding a plain decimal; a JSON number is rejected too (the service: "All money
 * amounts are strings"), with the service's own wording. */
export function checkMoney(field: string, value: unknown, required: boolean): Check {
  if (isAbsent(value) || (required && value === '')) return required ? `${field} is required` : undefined;
  if (typeof value === 'string' && isDecimalString(value)) return undefined;
  return `${field} must be a valid number`;
}

export function checkOneOf(field: string, value: unknown, allowed: readonly string[]): Check {
  if (isAbsent(value)) return undefined;
  if (typeof value === 'string' && allowed.includes(value)) return undefined;
  return `${field} must be one of ${allowed.join(', ')}`;
}

export function checkIntegerInRange(field: string, value: unknown, min: number, max: number): Check {
  if (isAbsent(value)) return undefined;
  if (Number.isInteger(value) && (value as number) >= min && (value as number) <= max) return undefined;
  return `${field} must be an integer from ${min} to ${max}`;
}

// Deliberately loose: one @, something on both sides, a dot in the domain. Stricter patterns
// reject real addresses; the service's own rule is not shown.
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isEmailLike(value: string): boolean {
  return EMAIL.test(value);
}
