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

/** About this much text of keys per query (DuckDB runs with little memory: see database.ts). */
const BATCH_BYTES = 1 << 20;

/**
 * The identities the table holds. Read a range of rowids at a time, each range's keys as one
 * string (each key after its length in bytes and a colon), about a megabyte: one string to decode
 * per range rather than one per key, and no key held as a string of its own. A range whose keys
 * are not all ASCII (a length in bytes is then not one in characters), or too long for one
 * string, is read key by key; so is a table with a column named rowid, which hides DuckDB's.
 */
export async function readKeys(conn: DuckDBConnection, table: string, key: string, byRowid: boolean): Promise<KeySet> {
  const t = quoteIdent(table);
  const k = quoteIdent(key);
  const [count, last, bytes] = (await conn.runAndReadAll(
    `SELECT count(${k})::DOUBLE, ${byRowid ? 'coalesce(max(rowid), -1)' : '0'}::DOUBLE, coalesce(sum(strlen(${k})), 0)::DOUBLE FROM ${t}`,
  )).getRows()[0] as [number, number, number];
  const keys = new KeySet(count);
  if (!byRowid) {
    await addEach(conn, keys, `SELECT ${k} FROM ${t} WHERE ${k} IS NOT NULL`);
    return keys;
  }
  const batch = Math.max(64, Math.min(65_536, Math.floor(BATCH_BYTES / (bytes / Math.max(count, 1) + 8))));
  for (let from = 0; from <= last; from += batch) {
    const range = `${k} IS NOT NULL AND rowid >= ${from} AND rowid < ${from + batch}`;
    const joined = await conn.runAndReadAll(
      `SELECT text, strlen(text)::DOUBLE FROM (SELECT string_agg(strlen(${k})::VARCHAR || ':' || ${k}, '') AS text FROM ${t} WHERE ${range})`,
    ).then((result) => result.getRows()[0] as [string | null, number], () => undefined);
    if (joined?.[0] === null) continue;
    if (joined !== undefined && joined[0].length === joined[1]) addLengthPrefixed(keys, joined[0]);
    else await addEach(conn, keys, `SELECT ${k} FROM ${t} WHERE ${range}`);
  }
  return keys;
}

/** Adds the keys a query returns, one string each. */
async function addEach(conn: DuckDBConnection, keys: KeySet, sql: string): Promise<void> {
  const result = await conn.stream(sql);
  for (let chunk = await result.fetchChunk(); chunk !== null && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const column = chunk.getColumnVector(0);
    for (let i = 0; i < chunk.rowCount; i += 1) keys.add(String(column.getItem(i)));
  }
}

/** Adds the keys of `length:key` entries, back to back. */
function addLengthPrefixed(keys: KeySet, text: string): void {
  let at = 0;
  while (at < text.length) {
    let length = 0;
    for (let c = text.charCodeAt(at); c !== 58; c = text.charCodeAt((at += 1))) length = length * 10 + c - 48;
    at += 1;
    keys.addSlice(text, at, at + length);
    at += length;
  }
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
