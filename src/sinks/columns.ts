// The columns of a dataset's table in a database sink, and how each row's values fit them (pure).
// The cursor field is a timestamp; D07's columns have the types its documentation gives; other
// datasets' columns are inferred from the rows, and a field that appears later becomes a new
// column. A value that does not fit its column's type is never lost: the column gets NULL and
// the value goes, under its field name, into the row's `_mismatched` JSON column, and the
// mismatch is reported once per run.
import { withField } from '../core/own-fields.ts';
import type { ExportRow } from '../core/types.ts';
import { compareCursorValues, contentRowKey, cursorValueOf } from '../exports/highwater.ts';
import { SinkError } from './errors.ts';
import type { SinkDataset } from './sink.ts';

export type ColumnType = 'bigint' | 'double' | 'boolean' | 'timestamptz' | 'text' | 'json';

export interface Column {
  name: string;
  type: ColumnType;
}

/** The row's identity column of datasets whose public_id is not unique (the 'content' identity). */
export const ROW_KEY_COLUMN = '_row_key';
/** Values that did not fit their column's type, as a JSON object by field name. */
export const MISMATCH_COLUMN = '_mismatched';

/** Fields with the types the service documents for them. */
const DOCUMENTED: Readonly<Record<string, readonly Column[]>> = {
  D07: [
    { name: 'public_id', type: 'text' },
    { name: 'amount', type: 'bigint' },
    { name: 'settled_amount', type: 'bigint' },
    { name: 'payment_type', type: 'text' },
    { name: 'payment_status', type: 'text' },
    { name: 'is_settled', type: 'boolean' },
    { name: 'paid_before_submission', type: 'boolean' },
    { name: 'paid_date', type: 'timestamptz' },
    { name: 'failure_reason', type: 'text' },
    { name: 'created_at', type: 'timestamptz' },
    { name: 'updated_at', type: 'timestamptz' },
  ],
};

/** The column that identifies a row: public_id, or for a 'content' identity a key of the whole row. */
export function keyColumn(dataset: SinkDataset): string {
  return dataset.identity === 'content' ? ROW_KEY_COLUMN : 'public_id';
}

/** The columns a new table starts with, before any row is seen. */
export function initialColumns(dataset: SinkDataset): Column[] {
  const columns: Column[] = [...(DOCUMENTED[dataset.code] ?? [])];
  const add = (name: string, type: ColumnType) => {
    if (!columns.some((c) => c.name === name)) columns.push({ name, type });
  };
  if (dataset.identity === 'content') add(ROW_KEY_COLUMN, 'text');
  add('public_id', 'text');
  add(dataset.cursorField, 'timestamptz');
  return columns;
}

/** The columns every table has besides the row's own fields. */
export function isBookkeepingColumn(name: string): boolean {
  return name === ROW_KEY_COLUMN || name === MISMATCH_COLUMN;
}

// An ISO-8601 UTC instant as the service writes them (seconds, optional fraction, Z).
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether the text is an instant as the service writes them that DuckDB and PostgreSQL both take
 * as it is: a day its month has (Date.parse takes 2023-02-29 as March 1st, which both refuse, so
 * a page with one failed), hours up to 23 (both store 24:00 as the next day's midnight), and a
 * year from 0001 (PostgreSQL has no year 0). Without Date.parse: this runs for each instant of
 * every row synced.
 */
export function isInstantText(text: string): boolean {
  if (!INSTANT.test(text)) return false;
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  if (year === 0 || month < 1 || month > 12 || day < 1) return false;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= DAYS_IN_MONTH[month - 1]! + (leap ? 1 : 0) &&
    twoDigits(text, 11) <= 23 && twoDigits(text, 14) <= 59 && twoDigits(text, 17) <= 59;
}

function twoDigits(text: string, at: number): number {
  return (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48;
}

/** The type a value suggests for a new column; null says nothing (a null). */
export function typeOf(value: unknown): ColumnType | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'bigint' : 'double';
  if (typeof value === 'string') return isInstantText(value) ? 'timestamptz' : 'text';
  return 'json';
}

/** Whether a value can be stored in a column of that type as it is. */
export function fits(value: unknown, type: ColumnType): boolean {
  if (value === null || value === undefined) return true;
  switch (type) {
    case 'json':
      return true;
    case 'text':
      return typeof value === 'string';
    case 'double':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeOf(value) === type;
  }
}

/** What a batch of rows changes in a table: new columns, and fields whose values did not fit. */
export interface ShapeChange {
  added: Column[];
  /** Fields with a value of another type than their column's, each with one example type. */
  mismatched: { name: string; column: ColumnType; seen: ColumnType }[];
  /** New fields the store cannot give a column of their own (ColumnNaming), each with why. */
  homeless?: { name: string; reason: string }[];
}

/**
 * How a store names columns. Two field names with the same key would be one column there (DuckDB
 * ignores case); a null key is a name the store cannot hold (longer than PostgreSQL's 63 bytes).
 * Such a field gets no column: its values go to `_mismatched`, so nothing is lost and the load
 * goes on, where a column for it would fail every page or mix two fields in one column.
 */
export interface ColumnNaming {
  key(name: string): string | null;
  /** Why `name` has no column: `clash` is the column holding its key, if any. */
  reason(name: string, clash: string | undefined): string;
}

/** Names compared exactly, any length: the default. */
const EXACT_NAMES: ColumnNaming = { key: (name) => name, reason: () => '' };

/** Why no SQL database can name a column so (empty, or with a NUL), or undefined. */
export function unnameable(name: string): string | undefined {
  if (name === '') return 'an empty name';
  if (name.includes('\u0000')) return 'a NUL in the name';
  return undefined;
}

/**
 * The columns of one table as rows arrive. `observe` takes a page's rows before they are written
 * and returns the columns to add; each mismatch of a field is reported once for the table's life
 * in this process (once per run).
 */
export class TableShape {
  readonly #columns = new Map<string, Column>();
  readonly #reported = new Set<string>();
  readonly #naming: ColumnNaming;
  /** The columns by their key in the store's naming. */
  readonly #byKey = new Map<string, Column>();
  /** Fields that have no column (ColumnNaming): their values always go to `_mismatched`. */
  readonly #homeless = new Set<string>();

  constructor(columns: readonly Column[], naming: ColumnNaming = EXACT_NAMES) {
    this.#naming = naming;
    // Every table has the bookkeeping columns: a field named like one in the store's eyes gets none.
    for (const name of [MISMATCH_COLUMN, ROW_KEY_COLUMN]) this.#byKey.set(naming.key(name)!, { name, type: 'json' });
    for (const c of columns) this.#add(c);
  }

  get columns(): Column[] {
    return [...this.#columns.values()];
  }

  /** Fields seen that have no column of their own, in the order they came. */
  get homeless(): readonly string[] {
    return [...this.#homeless];
  }

  /** Whether the field was seen and has no column of its own (its values go to `_mismatched`). */
  isHomeless(name: string): boolean {
    return this.#homeless.has(name);
  }

  column(name: string): Column | undefined {
    return this.#columns.get(name);
  }

  observe(rows: readonly ExportRow[]): ShapeChange {
    const added: Column[] = [];
    const mismatched: ShapeChange['mismatched'] = [];
    const homeless: NonNullable<ShapeChange['homeless']> = [];
    for (const row of rows) {
      for (const [name, value] of Object.entries(row)) {
        if (isBookkeepingColumn(name)) continue;
        const column = this.#columns.get(name);
        if (column === undefined) {
          // A field seen only as null so far has no type yet: its column comes with its first value.
          const type = typeOf(value);
          if (type === null || this.#homeless.has(name)) continue;
          const key = this.#naming.key(name);
          const clash = key === null ? undefined : this.#byKey.get(key);
          if (key === null || clash !== undefined) {
            this.#homeless.add(name);
            homeless.push({ name, reason: this.#naming.reason(name, clash?.name) });
            continue;
          }
          const created = { name, type };
          this.#add(created);
          added.push(created);
        } else if (!fits(value, column.type) && !this.#reported.has(name)) {
          this.#reported.add(name);
          mismatched.push({ name, column: column.type, seen: typeOf(value)! });
        }
      }
    }
    return homeless.length > 0 ? { added, mismatched, homeless } : { added, mismatched };
  }

  #add(column: Column): void {
    this.#columns.set(column.name, column);
    const key = this.#naming.key(column.name);
    if (key !== null) this.#byKey.set(key, column);
  }
}

/**
 * A row as column values: each field in its column when it fits, else null there and the value
 * under `_mismatched`. A field reserved for bookkeeping (a row carrying `_mismatched` itself)
 * goes under `_mismatched` too, so nothing the service sent is dropped.
 */
export function rowValues(row: ExportRow, shape: TableShape): { values: Map<string, unknown>; mismatched: Record<string, unknown> | null } {
  const values = new Map<string, unknown>();
  let mismatched: Record<string, unknown> | null = null;
  for (const [name, value] of Object.entries(row)) {
    if (value === undefined) continue;
    const column = isBookkeepingColumn(name) ? undefined : shape.column(name);
    if (column !== undefined && fits(value, column.type)) {
      values.set(name, value);
    } else if (column !== undefined || value !== null) {
      mismatched = withField(mismatched, name, value);
    }
  }
  return { values, mismatched };
}

/** Notices for a shape change, one per new column, mismatched field or field without a column. */
export function describeChange(table: string, change: ShapeChange): { kind: 'column-added' | 'type-changed' | 'no-column'; message: string }[] {
  return [
    ...change.added.map((c) => ({ kind: 'column-added' as const, message: `${table}: new column ${c.name} (${c.type})` })),
    ...change.mismatched.map((m) => ({
      kind: 'type-changed' as const,
      message: `${table}: ${m.name} had a ${m.seen} value in a ${m.column} column; such values are kept in ${MISMATCH_COLUMN}`,
    })),
    ...(change.homeless ?? []).map((h) => ({
      kind: 'no-column' as const,
      message: `${table}: ${h.name} gets no column (${h.reason}); its values are kept in ${MISMATCH_COLUMN}`,
    })),
  ];
}

/** A row's identity in its table: its public_id, or for a 'content' identity a key of the whole
 * row (contentRowKey). Undefined when the row has no public_id that is a non-empty string. */
export function identityOf(dataset: SinkDataset, row: ExportRow): string | undefined {
  const id = row.public_id;
  if (typeof id !== 'string' || id === '') return undefined;
  const key = dataset.identity === 'content' ? contentRowKey(row) : id;
  // A lone surrogate (a text cut inside an emoji) has no UTF-8 form: the databases store U+FFFD
  // in its place. The identity is the text as stored, else two ids stored alike would be two
  // identities, and a stored id read back would not match the one it was written from.
  return key.isWellFormed() ? key : key.toWellFormed();
}

/**
 * A page's rows by identity, each identity once: its newest version by the cursor field, and of
 * versions equally new the last read (a database upsert may not meet one key twice in one
 * statement). Read order alone is not enough: with `ordered: false` a group of pages may hold a
 * later window's page, read first, before an earlier window's older version of the same row. As
 * the stores' merges do, a version without a cursor value replaces only one without. The map's
 * order is that of each kept version's occurrence. A row without an identity: SinkError.
 */
export function latestByIdentity(dataset: SinkDataset, rows: readonly ExportRow[]): Map<string, ExportRow> {
  const byKey = new Map<string, ExportRow>();
  const field = dataset.cursorField;
  for (const row of rows) {
    const key = identityOf(dataset, row);
    if (key === undefined) {
      throw new SinkError(`a ${dataset.code} row has no public_id (a non-empty string), so it cannot be stored by identity`);
    }
    const held = byKey.get(key);
    if (held !== undefined && !asNew(row, held, field)) continue;
    byKey.delete(key);
    byKey.set(key, row);
  }
  return byKey;
}

/** Whether `row` is at least as new as `held` by the cursor field (a missing value is oldest). */
function asNew(row: ExportRow, held: ExportRow, field: string): boolean {
  const was = cursorValueOf(held, field);
  if (was === null) return true;
  const now = cursorValueOf(row, field);
  return now !== null && compareCursorValues(now, was) >= 0;
}
