// What the database file already holds for a dataset: its table's columns and key, and its state.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { DatasetState } from '../../exports/state.ts';
import { SinkError } from '../errors.ts';
import { columnTypeOfSql, STATE_TABLE, type TableColumn } from './sql.ts';

/** The table's columns in order, or undefined when there is no such table. */
export async function readColumns(conn: DuckDBConnection, table: string): Promise<TableColumn[] | undefined> {
  const result = await conn.runAndReadAll(
    `SELECT column_name, data_type FROM duckdb_columns()
     WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $1 ORDER BY column_index`,
    [table],
  );
  const rows = result.getRowObjectsJS() as { column_name: string; data_type: string }[];
  if (rows.length === 0) return undefined;
  return rows.map((r) => ({ name: r.column_name, type: columnTypeOfSql(r.data_type), sql: r.data_type }));
}

/** Whether the column is the table's primary key or unique on its own: what an upsert needs. */
export async function isKeyColumn(conn: DuckDBConnection, table: string, column: string): Promise<boolean> {
  const result = await conn.runAndReadAll(
    `SELECT constraint_column_names AS cols FROM duckdb_constraints()
     WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $1
       AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')`,
    [table],
  );
  return (result.getRowObjectsJS() as { cols: string[] }[]).some((r) => r.cols.length === 1 && r.cols[0] === column);
}

/** The state committed last for the key, or undefined. */
export async function readState(conn: DuckDBConnection, key: string, where: string): Promise<DatasetState | undefined> {
  const result = await conn.runAndReadAll(`SELECT CAST(state AS VARCHAR) AS state FROM ${STATE_TABLE} WHERE key = $1`, [key]);
  const text = (result.getRowObjectsJS() as { state: string }[])[0]?.state;
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as DatasetState;
  } catch (error) {
    throw new SinkError(`the state of ${key} in ${where} is not JSON; delete its row from ${STATE_TABLE} for a fresh load.`, { cause: error });
  }
}
