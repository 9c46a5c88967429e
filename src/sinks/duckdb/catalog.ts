// What the database file already holds for a dataset: its table's columns, the identities of its
// rows, and its state.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { DatasetState } from '../../exports/state.ts';
import { SinkError } from '../errors.ts';
import { KeySet } from './key-set.ts';
import { columnTypeOfSql, quoteIdent, STATE_TABLE, type TableColumn } from './sql.ts';

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

/** The identities the table holds, read in one scan of its key column, a chunk at a time (the
 * keys are hashed as they come, never all held as strings). */
export async function readKeys(conn: DuckDBConnection, table: string, key: string): Promise<KeySet> {
  const count = await conn.runAndReadAll(`SELECT count(*)::DOUBLE AS n FROM ${quoteIdent(table)}`);
  const keys = new KeySet(Number(count.getRows()[0]?.[0] ?? 0));
  const result = await conn.stream(`SELECT ${quoteIdent(key)} FROM ${quoteIdent(table)} WHERE ${quoteIdent(key)} IS NOT NULL`);
  for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const column = chunk.getColumnVector(0);
    for (let i = 0; i < chunk.rowCount; i += 1) keys.add(String(column.getItem(i)));
  }
  return keys;
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
