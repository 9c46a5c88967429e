// Redaction of export rows (the documented cross-dataset rules): a raw record becomes a row holding only the
// dataset's allowlisted fields, in allowlist order, with the cross-dataset masking rules applied
// by field name. Everything else a raw record carries (internal ids, the lender id used for
// tenant filtering, raw identity numbers, emails) never leaves.
import type { DatasetCode } from '../../core/catalog.ts';
import { ALLOWLISTS, NESTED_ALLOWLISTS } from './allowlists.ts';

export type RawRecord = Readonly<Record<string, unknown>>;
export type ExportRow = Record<string, unknown>;

const MASK = '*****';

/** Last 4 characters behind a fixed-width mask (the width does not leak the length). Values of
 * 4 characters or fewer would be shown whole, so they are masked entirely. */
export function maskLast4(value: string): string {
  const compact = value.trim();
  return compact.length <= 4 ? MASK : MASK + compact.slice(-4);
}

/** The year of a dd/MM/yyyy (as pushed) or yyyy-MM-dd date, or null. */
export function yearOf(value: string): number | null {
  const match = /^(\d{4})-\d{2}-\d{2}/.exec(value) ?? /^\d{1,2}\/\d{1,2}\/(\d{4})$/.exec(value.trim());
  return match === null ? null : Number(match[1]);
}

/** An IPv4 address reduced to its /16 network, e.g. 10.20.30.40 → 10.20.0.0/16; null otherwise. */
export function ipPrefix16(value: string): string | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value.trim());
  if (match === null || match.slice(1).some((octet) => Number(octet) > 255)) return null;
  return `${Number(match[1])}.${Number(match[2])}.0.0/16`;
}

/** A phone number with its middle masked: the first 4 and last 3 characters stay, so a person
 * can recognise a number without the export holding it. Short numbers keep only the last 2. */
export function maskPhone(number: string): string {
  const compact = number.replace(/[\s()-]/g, '');
  if (compact.length < 8) return '*'.repeat(Math.max(0, compact.length - 2)) + compact.slice(-2);
  return compact.slice(0, 4) + '*'.repeat(compact.length - 7) + compact.slice(-3);
}

function maskPhones(value: unknown): unknown {
  if (!Array.isArray(value)) return [];
  return value.map((phone: { number?: unknown; dnc?: unknown }) => ({
    key_masked: typeof phone?.number === 'string' ? maskPhone(phone.number) : null,
    dnc: phone?.dnc === true,
  }));
}

const FIELD_RULES: Readonly<Record<string, (value: unknown) => unknown>> = {
  id_number: (v) => (typeof v === 'string' && v !== '' ? maskLast4(v) : null),
  passport_number: (v) => (typeof v === 'string' && v !== '' ? maskLast4(v) : null),
  dob: (v) => (typeof v === 'string' ? yearOf(v) : null),
  ip_address: (v) => (typeof v === 'string' ? ipPrefix16(v) : null),
  phones: maskPhones,
};

function pick(raw: RawRecord, fields: readonly string[], nested: Readonly<Record<string, readonly string[]>>): ExportRow {
  const row: ExportRow = {};
  for (const field of fields) {
    const value = raw[field];
    const rule = FIELD_RULES[field];
    const inner = nested[field];
    if (rule !== undefined) row[field] = rule(value);
    else if (inner !== undefined) row[field] = Array.isArray(value) ? value.map((item: RawRecord) => pick(item, inner, {})) : [];
    else row[field] = value === undefined ? null : value;
  }
  return row;
}

/** The exported form of a raw record of `dataset`. Missing allowlisted fields come out as null so
 * every row of a dataset has the same keys. */
export function redact(dataset: DatasetCode, raw: RawRecord): ExportRow {
  return pick(raw, ALLOWLISTS[dataset], NESTED_ALLOWLISTS[dataset] ?? {});
}
