// The DuckDB statements of the sink (pure): table and column DDL, the page's staging table, the
// upsert from it, and the state row. Identifiers are always quoted, since field names come from
// the service; DuckDB compares them case-insensitively even when quoted.
import { MISMATCH_COLUMN, type Column, type ColumnType } from '../columns.ts';
import type { SinkDataset } from '../sink.ts';

/** The table of every dataset's state: its key and the state document. */
export const STATE_TABLE = '_lender_state';
/** The temporary table a page is appended to before it is upserted in one statement. */
export const PAGE_TABLE = '_lender_page';

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

export function createTableSql(table: string, columns: readonly TableColumn[], key: string): string {
  const defs = columns.map((c) => `${quoteIdent(c.name)} ${c.sql}${c.name === key ? ' PRIMARY KEY' : ''}`);
  return `CREATE TABLE ${quoteIdent(table)} (${defs.join(', ')})`;
}

export function addColumnSql(table: string, column: TableColumn): string {
  return `ALTER TABLE ${quoteIdent(table)} ADD COLUMN ${quoteIdent(column.name)} ${column.sql}`;
}

/** The staging table of a page to upsert: the table's columns and types, without its key
 * constraint, empty. Made inside the page's transaction, after its new columns. */
export function pageTableSql(table: string): string {
  return `CREATE OR REPLACE TEMP TABLE ${PAGE_TABLE} AS SELECT * FROM ${quoteIdent(table)} LIMIT 0`;
}

/**
 * Upserts the staged page: a row replaces the stored one of its identity only when its cursor
 * value is not older (a version read late never overwrites a newer one), every column replaced,
 * so a field the new version lacks becomes NULL.
 */
export function upsertSql(table: string, columns: readonly TableColumn[], key: string, cursor: string): string {
  const updates = columns.filter((c) => c.name !== key).map((c) => `${quoteIdent(c.name)} = excluded.${quoteIdent(c.name)}`);
  const c = quoteIdent(cursor);
  return `INSERT INTO ${quoteIdent(table)} AS stored SELECT * FROM ${PAGE_TABLE} ` +
    `ON CONFLICT (${quoteIdent(key)}) DO UPDATE SET ${updates.join(', ')} ` +
    `WHERE stored.${c} IS NULL OR excluded.${c} >= stored.${c}`;
}

/** Writes a dataset's state: an update of its row when it has one. */
export function saveStateSql(key: string, stateJson: string, hasRow: boolean): string {
  return hasRow
    ? `UPDATE ${STATE_TABLE} SET state = ${quoteText(stateJson)} WHERE key = ${quoteText(key)}`
    : `INSERT OR REPLACE INTO ${STATE_TABLE} VALUES (${quoteText(key)}, ${quoteText(stateJson)})`;
}
