// A page's rows through DuckDB's appender, in the table's column order: each field in its column
// when its value fits the column's type, else NULL there and the value under `_mismatched` (the
// same values as columns.ts `rowValues` for a table whose shape has observed the rows, without a
// map per row: this runs for every row synced). Numbers and booleans go in typed; text, instants
// and JSON as strings, which DuckDB casts to the column's type (instants to the microsecond). How
// each column is checked and appended is decided once per page. Appending is synchronous work on
// the event loop (about 2 µs a row), so a group of pages is appended a slice at a time: between
// slices the next page's response is read and the request after it sent, so the service no
// longer waits for all of a commit's appends (a 1,000,000-row sync took 1.2x as long without).
import type { DuckDBAppender } from '@duckdb/node-api';
import { nextTurn as defaultNextTurn, type NextTurn } from '../../core/next-turn.ts';
import type { ExportRow } from '../../core/types.ts';
import { isInheritedName, ownField, withField } from '../../core/own-fields.ts';
import { fits, isBookkeepingColumn, isInstantText, MISMATCH_COLUMN, ROW_KEY_COLUMN, type TableShape } from '../columns.ts';
import { storableJson } from '../json-text.ts';
import type { TableColumn } from './sql.ts';

const INT32_MAX = 2 ** 31 - 1;

/** Rows appended between two turns of the event loop: half a millisecond or so. Slices of 256
 * beat 500, 1,000 and 2,000 on the sync bench; smaller ones gain nothing more. */
export const ROWS_PER_TURN = 256;

// How a column's values are checked and appended, decided once per page.
/** The identity column: the row's key. */
const KEY = 0;
/** `_mismatched`: what did not fit. */
const MISMATCHED = 1;
/** `_row_key` when it is not the key: a bookkeeping column with no field of its own. */
const BOOKKEEPING = 2;
const BIGINT = 3;
const DOUBLE = 4;
const BOOLEAN = 5;
const JSON_TEXT = 6;
/** A text column: the string as it is. */
const TEXT = 7;
/** An instant (TIMESTAMPTZ): its text, cast by DuckDB. */
const INSTANT_TEXT = 8;
/** Any other type (a table made by hand): the value's text, cast by DuckDB. */
const OTHER = 9;
type Kind = typeof KEY | typeof MISMATCHED | typeof BOOKKEEPING | typeof BIGINT | typeof DOUBLE | typeof BOOLEAN | typeof JSON_TEXT |
  typeof TEXT | typeof INSTANT_TEXT | typeof OTHER;

function kindOf(column: TableColumn, key: string): Kind {
  if (column.name === key) return KEY;
  if (column.name === MISMATCH_COLUMN) return MISMATCHED;
  if (isBookkeepingColumn(column.name)) return BOOKKEEPING;
  switch (column.sql) {
    case 'BIGINT':
      return BIGINT;
    case 'DOUBLE':
      return DOUBLE;
    case 'BOOLEAN':
      return BOOLEAN;
    case 'JSON':
      return JSON_TEXT;
    default:
      return column.type === 'text' ? TEXT : column.type === 'timestamptz' ? INSTANT_TEXT : OTHER;
  }
}

export async function appendRows(
  appender: DuckDBAppender, rows: ReadonlyMap<string, ExportRow>, columns: readonly TableColumn[], key: string,
  homeless: readonly string[] = [], nextTurn: NextTurn = defaultNextTurn,
): Promise<void> {
  const count = columns.length;
  const kinds = columns.map((c) => kindOf(c, key));
  const names = columns.map((c) => c.name);
  const inherited = names.map(isInheritedName);
  const types = columns.map((c) => c.type);
  // `_mismatched` is last in the tables the sink makes: each value is then appended as soon as it
  // is checked. Elsewhere (a column added after it), the values wait for it in `fitting`.
  const mismatchedAt = kinds.indexOf(MISMATCHED);
  const deferred = mismatchedAt !== -1 && mismatchedAt !== count - 1;
  const fitting: unknown[] = new Array(count);
  let appended = 0;
  for (const [id, row] of rows) {
    if (appended > 0 && appended % ROWS_PER_TURN === 0) await nextTurn();
    appended += 1;
    let mismatched: Record<string, unknown> | null = null;
    for (let i = 0; i < count; i += 1) {
      const kind = kinds[i]!;
      if (kind === KEY || kind === MISMATCHED || kind === BOOKKEEPING) {
        if (!deferred) appendBookkeeping(appender, kind, id);
        continue;
      }
      let value = inherited[i] ? ownField(row, names[i]!) : row[names[i]!];
      if (value !== undefined && value !== null &&
        !(kind === TEXT ? typeof value === 'string' : kind === INSTANT_TEXT ? typeof value === 'string' && isInstantText(value) : fits(value, types[i]!))) {
        mismatched = withField(mismatched, names[i]!, value);
        value = null;
      }
      if (deferred) fitting[i] = value;
      else appendValue(appender, kind, value);
    }
    // Fields without a column of their own (TableShape.homeless), and those named like a
    // bookkeeping column, go to `_mismatched` (columns.ts rowValues).
    for (const name of homeless) {
      const value = ownField(row, name);
      if (value !== undefined && value !== null) mismatched = withField(mismatched, name, value);
    }
    const rowKey = row[ROW_KEY_COLUMN];
    if (rowKey !== undefined && rowKey !== null) mismatched = withField(mismatched, ROW_KEY_COLUMN, rowKey);
    const ownMismatched = row[MISMATCH_COLUMN];
    if (ownMismatched !== undefined && ownMismatched !== null) mismatched = withField(mismatched, MISMATCH_COLUMN, ownMismatched);
    if (deferred) {
      for (let i = 0; i < count; i += 1) {
        const kind = kinds[i]!;
        if (kind === MISMATCHED) appendMismatched(appender, mismatched);
        else if (kind === KEY || kind === BOOKKEEPING) appendBookkeeping(appender, kind, id);
        else appendValue(appender, kind, fitting[i]);
      }
    } else if (mismatchedAt !== -1) {
      appendMismatched(appender, mismatched);
    }
    appender.endRow();
  }
}

/** The key (the row's identity) or NULL for a bookkeeping column other than `_mismatched`. */
function appendBookkeeping(appender: DuckDBAppender, kind: Kind, id: string): void {
  if (kind === KEY) appender.appendVarchar(id);
  else if (kind === BOOKKEEPING) appender.appendNull();
}

function appendMismatched(appender: DuckDBAppender, mismatched: Record<string, unknown> | null): void {
  if (mismatched === null) appender.appendNull();
  else appender.appendVarchar(storableJson(mismatched));
}

/** A value that fits its column, or NULL. Numbers and booleans go in typed; text, instants, JSON
 * and the values of types other than the sink's own (a table made by hand) as text, which
 * DuckDB casts to the column's type. */
function appendValue(appender: DuckDBAppender, kind: Kind, value: unknown): void {
  if (value === undefined || value === null) {
    appender.appendNull();
    return;
  }
  switch (kind) {
    case BIGINT: {
      const n = value as number;
      if (n >= -INT32_MAX && n <= INT32_MAX) appender.appendInteger(n);
      else appender.appendBigInt(BigInt(n));
      return;
    }
    case DOUBLE:
      appender.appendDouble(value as number);
      return;
    case BOOLEAN:
      appender.appendBoolean(value as boolean);
      return;
    case JSON_TEXT:
      appender.appendVarchar(storableJson(value));
      return;
    default:
      appender.appendVarchar(typeof value === 'string' ? value : String(value));
  }
}

/** The length of the rows' text values, in UTF-16 units: DuckDB holds a page in memory in
 * proportion to it as it commits it (database.ts memoryLimitMb). */
export function textLength(rows: Iterable<ExportRow>): number {
  let length = 0;
  for (const row of rows) {
    for (const name in row) {
      const value = row[name];
      if (typeof value === 'string') length += value.length;
    }
  }
  return length;
}

/**
 * The rows TableShape.observe can learn something from: those with a new field (with a value,
 * no column, and not already known to get none: TableShape.isHomeless), or with a value that does
 * not fit its column. observe does nothing with the others, so observing these alone changes the
 * shape and reports exactly what observing all would, without its work for every value of every
 * row.
 */
export function rowsToObserve(shape: TableShape, rows: Iterable<ExportRow>): ExportRow[] {
  const news: ExportRow[] = [];
  for (const row of rows) {
    for (const name in row) {
      if (isBookkeepingColumn(name)) continue;
      const value = row[name];
      if (value === null || value === undefined) continue;
      const column = shape.column(name);
      if (column === undefined ? !shape.isHomeless(name) : !fits(value, column.type)) {
        news.push(row);
        break;
      }
    }
  }
  return news;
}
