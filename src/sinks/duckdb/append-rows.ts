// A page's rows through DuckDB's appender, in the table's column order: each field in its column
// when its value fits the column's type, else NULL there and the value under `_mismatched` (the
// same values as columns.ts `rowValues` for a table whose shape has observed the rows, without a
// map per row: this runs for every row synced). Numbers and booleans go in typed; text, instants and JSON as strings, which DuckDB
// casts to the column's type (instants to the microsecond).
import type { DuckDBAppender } from '@duckdb/node-api';
import type { ExportRow } from '../../core/types.ts';
import { fits, isBookkeepingColumn, MISMATCH_COLUMN, ROW_KEY_COLUMN } from '../columns.ts';
import type { TableColumn } from './sql.ts';

const INT32_MAX = 2 ** 31 - 1;

export function appendRows(
  appender: DuckDBAppender, rows: ReadonlyMap<string, ExportRow>, columns: readonly TableColumn[], key: string,
): void {
  // Each value is checked once (an instant's check parses it): what fits is kept here for the
  // append, since `_mismatched` may come before the columns whose values it holds.
  const fitting: unknown[] = new Array(columns.length);
  for (const [id, row] of rows) {
    let mismatched: Record<string, unknown> | null = null;
    for (let i = 0; i < columns.length; i += 1) {
      const column = columns[i]!;
      const value = isBookkeepingColumn(column.name) ? undefined : row[column.name];
      if (value === undefined || value === null || (column.type === 'timestamptz' ? isInstant(value) : fits(value, column.type))) {
        fitting[i] = value;
      } else {
        fitting[i] = null;
        (mismatched ??= {})[column.name] = value;
      }
    }
    // Fields named like a bookkeeping column have none of their own (columns.ts rowValues).
    for (const name of BOOKKEEPING) {
      const value = row[name];
      if (value !== undefined && value !== null) (mismatched ??= {})[name] = value;
    }
    for (let i = 0; i < columns.length; i += 1) {
      const column = columns[i]!;
      const value = fitting[i];
      if (column.name === key) appender.appendVarchar(id);
      else if (column.name === MISMATCH_COLUMN) appendMismatched(appender, mismatched);
      else if (value === undefined || value === null) appender.appendNull();
      else appendValue(appender, value, column);
    }
    appender.endRow();
  }
}

const BOOKKEEPING = [ROW_KEY_COLUMN, MISMATCH_COLUMN];

function appendMismatched(appender: DuckDBAppender, mismatched: Record<string, unknown> | null): void {
  if (mismatched === null) appender.appendNull();
  else appender.appendVarchar(JSON.stringify(mismatched));
}

/** A value that fits its column. Types other than the sink's own (a table made by hand) get the
 * value's text and DuckDB's cast. */
function appendValue(appender: DuckDBAppender, value: unknown, column: TableColumn): void {
  switch (column.sql) {
    case 'BIGINT': {
      const n = value as number;
      if (n >= -INT32_MAX && n <= INT32_MAX) appender.appendInteger(n);
      else appender.appendBigInt(BigInt(n));
      return;
    }
    case 'DOUBLE':
      appender.appendDouble(value as number);
      return;
    case 'BOOLEAN':
      appender.appendBoolean(value as boolean);
      return;
    case 'JSON':
      appender.appendVarchar(JSON.stringify(value));
      return;
    default:
      appender.appendVarchar(typeof value === 'string' ? value : String(value));
  }
}

// An instant as columns.ts types one: seconds, up to 9 digits of fraction, UTC.
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * fits(value, 'timestamptz'), without Date.parse for the instants the service sends (three of
 * D07's columns, for every row): a date and time whose parts are all in range parses, so only
 * the others (day 31 of April, hour 24...) are left to Date.parse, as fits does.
 */
export function isInstant(value: unknown): boolean {
  if (typeof value !== 'string' || !INSTANT.test(value)) return false;
  const month = twoDigits(value, 5);
  const day = twoDigits(value, 8);
  if (month >= 1 && month <= 12 && day >= 1 && day <= DAYS_IN_MONTH[month - 1]! &&
    twoDigits(value, 11) <= 23 && twoDigits(value, 14) <= 59 && twoDigits(value, 17) <= 59) return true;
  return fits(value, 'timestamptz');
}

function twoDigits(text: string, at: number): number {
  return (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48;
}
