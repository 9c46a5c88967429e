// Reading the dataset fetch's query string. The export endpoints have no documented 400s, so the rules
// below are the sandbox's choices, picked to be lenient where a wrong guess is harmless and to
// fail (500, like a malformed cursor) where a guess would silently change which rows a load gets:
// - limit: an integer is clamped to 1..1000; anything else (missing, empty, '10.5', 'abc') reads
//   as the default 500.
// - sort: 'asc' or 'desc', case-insensitive; anything else reads as the default 'asc'.
// - includeTotal: 'true' or '1' (case-insensitive) is true; anything else is false.
// - since/until: ISO-8601 dates or date-times; a value without an offset is UTC. An unparseable
//   value is a 500 rather than being ignored: ignoring `since` would turn an incremental load
//   into a full one, ignoring `until` would read past a window.
// Strict mode (SandboxOptions.strict) keeps none of that leniency, since the service may keep
// none: a parameter it does not document, a repeated or empty one, a limit that is not an
// integer, a sort other than asc/desc, an includeTotal other than true/false, and a timestamp
// holding a space (an unencoded '+') are each a 500 naming the parameter.
import { DateTime } from 'luxon';
import { PAGE_MAX } from '../../core/catalog.ts';
import { ownField } from '../../core/own-fields.ts';
import type { SortOrder } from './cursor.ts';

export const DEFAULT_LIMIT = 500;

export interface PageQuery {
  readonly since: number | null;
  readonly until: number | null;
  readonly cursor: string | null;
  readonly limit: number;
  readonly sort: SortOrder;
  readonly includeTotal: boolean;
}

export class QueryError extends Error {
  override readonly name = 'QueryError';
}

export function parseLimit(raw: string | null): number {
  if (raw === null || !/^\s*[+-]?\d+\s*$/.test(raw)) return DEFAULT_LIMIT;
  return Math.min(PAGE_MAX, Math.max(1, Number(raw)));
}

export function parseSort(raw: string | null): SortOrder {
  return raw !== null && raw.trim().toLowerCase() === 'desc' ? 'desc' : 'asc';
}

export function parseFlag(raw: string | null): boolean {
  const value = raw?.trim().toLowerCase();
  return value === 'true' || value === '1';
}

/** Epoch milliseconds of an ISO-8601 date or date-time, or null when it is not one. */
export function parseInstant(raw: string): number | null {
  // An unencoded '+' in a query string arrives as a space: '...T00:00:00 04:00'.
  const text = raw.trim().replace(/ (\d{2}(?::?\d{2})?)$/, '+$1');
  // Luxon also reads bare times ('10:00') as "today", which would make a bound depend on the day.
  if (!/^\d{4}-/.test(text)) return null;
  const parsed = DateTime.fromISO(text, { zone: 'utc' });
  return parsed.isValid ? parsed.toMillis() : null;
}

function parseBound(params: URLSearchParams, name: 'since' | 'until'): number | null {
  const raw = params.get(name);
  if (raw === null || raw === '') return null;
  const ms = parseInstant(raw);
  if (ms === null) throw new QueryError(`Malformed ${name}: expected an ISO-8601 timestamp such as 2026-01-01T00:00:00Z.`);
  return ms;
}

export function parsePageQuery(params: URLSearchParams, strict = false): PageQuery {
  if (strict) checkStrictQuery(params);
  const cursor = params.get('cursor');
  return {
    since: parseBound(params, 'since'),
    until: parseBound(params, 'until'),
    cursor: cursor === null || cursor === '' ? null : cursor,
    limit: parseLimit(params.get('limit')),
    sort: parseSort(params.get('sort')),
    includeTotal: parseFlag(params.get('includeTotal')),
  };
}

export const QUERY_PARAMETERS = ['since', 'until', 'cursor', 'limit', 'sort', 'includeTotal'] as const;

const STRICT_VALUES: Readonly<Record<string, { readonly test: (value: string) => boolean; readonly expected: string }>> = {
  since: { test: (v) => !/\s/.test(v), expected: "an ISO-8601 timestamp with any '+' encoded as %2B" },
  until: { test: (v) => !/\s/.test(v), expected: "an ISO-8601 timestamp with any '+' encoded as %2B" },
  cursor: { test: () => true, expected: 'the nextCursor of a previous page' },
  limit: { test: (v) => /^-?\d+$/.test(v), expected: 'an integer' },
  sort: { test: (v) => v === 'asc' || v === 'desc', expected: 'asc or desc' },
  includeTotal: { test: (v) => v === 'true' || v === 'false', expected: 'true or false' },
};

function checkStrictQuery(params: URLSearchParams): void {
  const seen = new Set<string>();
  for (const [name, value] of params) {
    // Own names only: a parameter named toString or __proto__ is unknown, not Object.prototype's.
    const rule = ownField(STRICT_VALUES, name);
    if (rule === undefined) {
      throw new QueryError(`Unknown query parameter '${name}'; the parameters are ${QUERY_PARAMETERS.join(', ')}.`);
    }
    if (seen.has(name)) throw new QueryError(`Query parameter '${name}' is given more than once.`);
    seen.add(name);
    if (value === '' || !rule.test(value)) throw new QueryError(`Malformed ${name}: expected ${rule.expected}.`);
  }
}

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
