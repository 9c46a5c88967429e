// sql(): a query on the DuckDB database that sync writes (a table per dataset: d07 for D07). The
// file is opened for the query and closed after it, so a sync of this process can open it next;
// while another process syncs into it, DuckDB's lock refuses the query (DuckDbLockedError).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { inspect } from 'node:util';
import { counted } from '../core/counted.ts';
import { ConfigError } from '../core/errors.ts';
import { DEFAULT_DUCKDB_FILE } from '../sinks/sink-spec.ts';
import { inTurn } from './file-turns.ts';
import { htmlTable } from './html.ts';
import { notebookDisplay } from './notebook.ts';
import { formatTable } from './table.ts';

/** Options of `session.sql()`. */
export interface SqlOptions {
  /** The DuckDB file. Default ./lender.duckdb, the default of `lender sync`. */
  database?: string;
  /** Stops the query (an AbortError). In the REPL, Ctrl-C does. */
  signal?: AbortSignal;
}

/** Rows of a query: an Array (map/filter/length work) that prints as a table. */
export class QueryResult extends Array<Record<string, unknown>> {
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }

  #columns: string[] = [];

  /** The columns, in the query's order (none when it returned no row). */
  get columns(): string[] {
    return this.#columns;
  }

  static create(columns: readonly string[], rows: Iterable<Record<string, unknown>>): QueryResult {
    const result = new QueryResult();
    result.#columns = [...columns];
    for (const row of rows) result.push(row);
    return result;
  }

  html(): string {
    return htmlTable(this, this.#columns);
  }

  toJSON(): Record<string, unknown>[] {
    return [...this];
  }

  [inspect.custom](): string {
    const head = counted(this.length, 'row');
    // In a notebook the table was shown as HTML when it came: the value says only what it is.
    if (notebookDisplay() !== undefined || this.#columns.length === 0) return head;
    return `${head}\n${formatTable(this, this.#columns)}`;
  }
}

/**
 * A whole number DuckDB gives as a bigint (count(*), sum() of integers, BIGINT columns) becomes a
 * number when it is one exactly, so results add up and chart like any other number.
 */
function plainValue(value: unknown): unknown {
  if (typeof value === 'bigint' && value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(value);
  return value;
}

/** Runs the query on the database file and closes it. */
export async function runSql(query: string, opts: SqlOptions = {}): Promise<QueryResult> {
  if (typeof query !== 'string' || query.trim() === '') throw new ConfigError('sql() needs a query, e.g. sql("SELECT count(*) FROM d07")');
  const path = resolve(opts.database ?? DEFAULT_DUCKDB_FILE);
  const { duckdbSink } = await import('../sinks/duckdb-sink.ts');
  return inTurn(path, async () => {
    // Opening a missing file would create an empty database: say what to do instead.
    if (!existsSync(path)) {
      throw new ConfigError(`There is no DuckDB database at ${path}; sync into it first, e.g. await sync(['D07'], { to: 'duckdb:${opts.database ?? DEFAULT_DUCKDB_FILE}' })`);
    }
    const sink = duckdbSink({ path });
    try {
      const rows = await sink.query(query, { signal: opts.signal });
      return QueryResult.create(Object.keys(rows[0] ?? {}), rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, plainValue(v)]))));
    } finally {
      await sink.close();
    }
  });
}
