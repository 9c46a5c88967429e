// The DuckDB statements of the sink (pure): table and column DDL, the page's staging table, the
// merge from it, and the state row. Identifiers are always quoted, since field names come from
// the service; DuckDB compares them case-insensitively even when quoted.
import { MISMATCH_COLUMN, unnameable, type Column, type ColumnNaming, type ColumnType } from '../columns.ts';
import type { SinkDataset } from '../sink.ts';

/** The table of every dataset's state: its key and the state document. */
export const STATE_TABLE = '_lender_state';
/** The temporary table a page's rows of stored identities are appended to before they are merged. */
export const PAGE_TABLE = '_lender_page';
/** The temporary table of the stored rows a merge met, and whether each is replaced. */
export const MATCH_TABLE = '_lender_match';

/** A column as the table has it: the type the sink reasons with, and the type DuckDB stores. */
export interface TableColumn extends Column {
  sql: string;
}

const SQL_TYPE: Readonly<Record<ColumnType, string>> = {
  bigint: 'BIGINT',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
  timestamptz: 'TIMESTAMPTZ',
  text: 'VARCHAR',
  json: 'JSON',
};

export function tableColumn(column: Column): TableColumn {
  return { ...column, sql: SQL_TYPE[column.type] };
}

export const MISMATCH: TableColumn = tableColumn({ name: MISMATCH_COLUMN, type: 'json' });

/**
 * The column type of a type DuckDB's catalog reports (duckdb_columns().data_type). A table the sink
 * did not create may have other types: integers count as bigint, decimals as double, and anything
 * else as text, so only strings go to it as they are and other values go to `_mismatched`.
 */
export function columnTypeOfSql(sql: string): ColumnType {
  const type = sql.toUpperCase();
  if (type === 'JSON') return 'json';
  if (type === 'BOOLEAN') return 'boolean';
  if (type === 'TIMESTAMP WITH TIME ZONE' || type === 'TIMESTAMPTZ') return 'timestamptz';
  if (/^(U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT))$/.test(type)) return 'bigint';
  if (type === 'DOUBLE' || type === 'FLOAT' || type.startsWith('DECIMAL')) return 'double';
  return 'text';
}

/** The table of a dataset: its code in lower case (`d07`). */
export function tableNameOf(dataset: SinkDataset): string {
  return dataset.code.toLowerCase();
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A string literal (standard SQL: only the quote is escaped). */
export function quoteText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

export function stateTableSql(): string {
  return `CREATE TABLE IF NOT EXISTS ${STATE_TABLE} (key VARCHAR PRIMARY KEY, state JSON NOT NULL)`;
}

/** A dataset's table. No primary key: the sink keeps one row per identity itself (see mergeSql),
 * and an index on the key would cost more than the rows (see docs/sinks.md). */
export function createTableSql(table: string, columns: readonly TableColumn[]): string {
  return `CREATE TABLE ${quoteIdent(table)} (${columns.map((c) => `${quoteIdent(c.name)} ${c.sql}`).join(', ')})`;
}

export function addColumnSql(table: string, column: TableColumn): string {
  return `ALTER TABLE ${quoteIdent(table)} ADD COLUMN ${quoteIdent(column.name)} ${column.sql}`;
}

/** The staging table of the rows to merge: the table's columns and types, empty. Made inside the
 * page's transaction, after its new columns. */
export function pageTableSql(table: string): string {
  return `CREATE OR REPLACE TEMP TABLE ${PAGE_TABLE} AS SELECT * FROM ${quoteIdent(table)} LIMIT 0`;
}

/**
 * Merges the staged rows into the table, which has no index: one join of the table with the stage
 * finds the stored rows of the staged identities (by rowid, valid within the transaction), those
 * whose cursor value is not newer than the staged one's are deleted, and the staged rows are
 * inserted but where a newer version stays. So a version read late never overwrites a newer one,
 * an equal cursor value replaces (the later read wins), every column is replaced (a field the new
 * version lacks becomes NULL), and a staged identity the table does not hold is inserted. A NULL
 * stored cursor is replaced by anything; a NULL staged one replaces only a NULL. A table with a
 * column named rowid (a field of that name) hides DuckDB's rowid: its rows are then deleted by a
 * second join on the key.
 */
export function mergeSql(table: string, key: string, cursor: string, byRowid = true): string[] {
  const t = quoteIdent(table);
  const k = quoteIdent(key);
  const c = quoteIdent(cursor);
  const replaced = `coalesce(stored.${c} IS NULL OR page.${c} >= stored.${c}, false)`;
  const insert = `INSERT INTO ${t} SELECT * FROM ${PAGE_TABLE} WHERE ${k} NOT IN (SELECT key FROM ${MATCH_TABLE} WHERE NOT replaced)`;
  const match = `CREATE OR REPLACE TEMP TABLE ${MATCH_TABLE} AS SELECT ${byRowid ? 'stored.rowid AS stored_row, ' : ''}page.${k} AS key, ` +
    `${replaced} AS replaced FROM ${t} AS stored JOIN ${PAGE_TABLE} AS page ON stored.${k} = page.${k}`;
  return byRowid
    ? [match, `DELETE FROM ${t} WHERE rowid IN (SELECT stored_row FROM ${MATCH_TABLE} WHERE replaced)`, insert]
    : [match, `DELETE FROM ${t} AS stored USING ${PAGE_TABLE} AS page WHERE stored.${k} = page.${k} AND ${replaced}`, insert];
}

/** Whether DuckDB's rowid can be used in the table: no column of its own is named so. */
export function hasRowid(columns: Iterable<{ name: string }>): boolean {
  for (const c of columns) if (c.name.toLowerCase() === 'rowid') return false;
  return true;
}

/** Writes a dataset's state: an update of its row when it has one. */
export function saveStateSql(key: string, stateJson: string, hasRow: boolean): string {
  return hasRow
    ? `UPDATE ${STATE_TABLE} SET state = ${quoteText(stateJson)} WHERE key = ${quoteText(key)}`
    : `INSERT OR REPLACE INTO ${STATE_TABLE} VALUES (${quoteText(key)}, ${quoteText(stateJson)})`;
}

/** DuckDB compares column names without case: `Amount` beside `amount` gets no column. */
export const DUCKDB_NAMING: ColumnNaming = {
  key: (name) => (unnameable(name) === undefined ? name.toLowerCase() : null),
  reason: (name, clash) => unnameable(name) ?? `DuckDB compares column names without case, and the column ${clash} has this one`,
};
