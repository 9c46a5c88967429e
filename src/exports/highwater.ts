// Cursor-value bookkeeping (pure): the high-water mark of a load, the last position inside a
// window, and the boundary filters that keep an inclusive `since` from delivering a row twice.
import { createHash } from 'node:crypto';
import { withField } from '../core/own-fields.ts';
import type { ExportRow } from '../core/types.ts';

/** A cursor-field value and the ids of the rows delivered at exactly that value. */
export interface ValueMark {
  value: string;
  ids: string[];
}

/** The row's upsert key: public_id, else id (the service documents public_id as the stable identifier). */
export function rowKey(row: ExportRow): string {
  const key = row.public_id ?? row.id;
  if (typeof key === 'string') return key;
  if (typeof key === 'number' || typeof key === 'bigint') return String(key);
  // No identifier at all: the row's content is the only thing that tells two rows apart.
  return JSON.stringify(row);
}

/** How rows are told apart at one cursor value (the boundary and lookback dedupe). */
export type RowKey = (row: ExportRow) => string;

/**
 * Datasets whose public_id is not unique per row (for D16 the service documents it as the
 * case/link identifier, which may not be unique per deal row). Two rows sharing it at the same cursor value
 * are told apart by their content instead of being dropped as one.
 */
export const NON_UNIQUE_PUBLIC_ID: ReadonlySet<string> = new Set(['D16']);

/** How rows at one cursor value are told apart when dropping those already delivered: 'key'
 * (public_id, else id) or 'content' (that plus a digest of the row). */
export type RowIdentity = 'key' | 'content';

/** The identity a dataset's dedupe uses: rowKey, or rowKey plus a digest of the row. */
export function identityFor(dataset: string): RowIdentity {
  return NON_UNIQUE_PUBLIC_ID.has(dataset) ? 'content' : 'key';
}

export function rowKeyOf(identity: RowIdentity): RowKey {
  return identity === 'content' ? contentRowKey : rowKey;
}

/**
 * rowKey plus 16 hex digits (64 bits) of a SHA-1 of the row's canonical JSON (keys sorted at
 * every depth): a row read again unchanged gets the same key and is dropped, a different row
 * with the same public_id is not. Truncated so the ids kept in the state stay compact; a
 * collision would need two distinct rows with the same public_id and cursor value anyway.
 */
export function contentRowKey(row: ExportRow): string {
  const digest = createHash('sha1').update(canonicalJson(row)).digest('hex').slice(0, 16);
  return `${rowKey(row)}#${digest}`;
}

/** JSON with object keys in sorted order, so the service may reorder fields freely. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
}

export function cursorValueOf(row: ExportRow, field: string): string | null {
  const v = row[field];
  return typeof v === 'string' ? v : null;
}

/**
 * Orders two cursor values. Same-shaped UTC ISO strings compare as text (fast path, 1M rows);
 * otherwise by instant, and by text when the instants are equal (sub-millisecond precision).
 */
export function compareCursorValues(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === b.length && a.endsWith('Z') && b.endsWith('Z')) return a < b ? -1 : 1;
  const ma = Date.parse(a);
  const mb = Date.parse(b);
  if (Number.isFinite(ma) && Number.isFinite(mb) && ma !== mb) return ma < mb ? -1 : 1;
  return a < b ? -1 : 1;
}

/** Mutable tracker of the greatest value delivered and the ids delivered at it. */
export class HighWaterTracker {
  #value: string | null;
  #ids: Set<string>;
  readonly #key: RowKey;

  constructor(start: ValueMark | null = null, key: RowKey = rowKey) {
    this.#value = start?.value ?? null;
    this.#ids = new Set(start?.ids ?? []);
    this.#key = key;
  }

  observe(rows: readonly ExportRow[], field: string): void {
    // Per page, not per row: the page's greatest value first, then the ids at it. Raising the mark
    // row by row made a new Set for every row of an ascending walk (each row is a new maximum).
    let top: string | null = null;
    for (const row of rows) {
      const v = cursorValueOf(row, field);
      if (v !== null && (top === null || compareCursorValues(v, top) > 0)) top = v;
    }
    if (top === null) return;
    const cmp = this.#value === null ? 1 : compareCursorValues(top, this.#value);
    if (cmp < 0) return;
    if (cmp > 0) {
      this.#value = top;
      this.#ids = new Set();
    }
    // compareCursorValues is 0 only for identical strings, so identity is the same test.
    for (const row of rows) if (cursorValueOf(row, field) === top) this.#ids.add(this.#key(row));
  }

  snapshot(): ValueMark | null {
    return this.#value === null ? null : { value: this.#value, ids: [...this.#ids] };
  }
}

/**
 * The last value in delivery order inside one window, with the ids delivered at it; what is
 * needed to re-read the rest of a window as a narrower one after a mid-window 504.
 */
export function advanceLast(last: ValueMark | null, rows: readonly ExportRow[], field: string, key: RowKey = rowKey): ValueMark | null {
  let end = rows.length - 1;
  while (end >= 0 && cursorValueOf(rows[end]!, field) === null) end -= 1;
  if (end < 0) return last;
  const value = cursorValueOf(rows[end]!, field)!;
  const ids = last !== null && compareCursorValues(last.value, value) === 0 ? new Set(last.ids) : new Set<string>();
  for (let i = end; i >= 0; i -= 1) {
    const v = cursorValueOf(rows[i]!, field);
    if (v === null) continue;
    if (compareCursorValues(v, value) !== 0) break;
    ids.add(key(rows[i]!));
  }
  return { value, ids: [...ids] };
}

/** Predicate of rows that were already delivered and must be dropped. */
export type DeliveredFilter = (row: ExportRow, field: string) => boolean;

/** Drops rows at exactly mark.value whose id is in mark.ids (the inclusive-since boundary). */
export function boundaryFilter(mark: ValueMark | null, key: RowKey = rowKey): DeliveredFilter | null {
  if (mark === null || mark.ids.length === 0) return null;
  const ids = new Set(mark.ids);
  return (row, field) => {
    const v = cursorValueOf(row, field);
    return v !== null && compareCursorValues(v, mark.value) === 0 && ids.has(key(row));
  };
}

/** Drops rows whose id was delivered before at the same cursor value (lookback dedupe). */
export function seenFilter(seen: Readonly<Record<string, string>> | null, key: RowKey = rowKey): DeliveredFilter | null {
  if (seen === null) return null;
  return (row, field) => {
    const v = cursorValueOf(row, field);
    const id = key(row);
    // Own properties only: an id such as "constructor" must not find Object.prototype's.
    const before = Object.hasOwn(seen, id) ? seen[id] : undefined;
    return v !== null && before !== undefined && compareCursorValues(before, v) === 0;
  };
}

export function applyFilters(rows: ExportRow[], filters: readonly (DeliveredFilter | null)[], field: string): ExportRow[] {
  const active = filters.filter((f): f is DeliveredFilter => f !== null);
  if (active.length === 0) return rows;
  return rows.filter((row) => !active.some((f) => f(row, field)));
}

/**
 * Lookback memory: id -> cursor value of rows delivered at or after `floor`, so a re-read of the
 * lookback span can tell a row already delivered in this version from a late or changed one.
 */
export function recordSeen(
  seen: Record<string, string>, rows: readonly ExportRow[], field: string, floor: string, key: RowKey = rowKey,
): void {
  for (const row of rows) {
    const v = cursorValueOf(row, field);
    if (v !== null && compareCursorValues(v, floor) >= 0) withField(seen, key(row), v);
  }
}

export function pruneSeen(seen: Record<string, string>, floor: string): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [id, v] of Object.entries(seen)) if (compareCursorValues(v, floor) >= 0) withField(kept, id, v);
  return kept;
}
