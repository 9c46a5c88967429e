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
import { DateTime } from 'luxon';
import { PAGE_MAX } from '../../core/catalog.ts';
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

export function parsePageQuery(params: URLSearchParams): PageQuery {
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

export function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
