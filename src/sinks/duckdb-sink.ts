// DuckDB, exactly once: one database file, a table per dataset (its code in lower case) keyed by
// the rows' identity, and each dataset's state in the table _lender_state. A commit is one
// transaction: the page's new columns, its rows upserted (a row never replaces a newer version of
// itself) and the state after them. A crash at any instant leaves the last committed page and its
// state, together. Rows go in through DuckDB's appender, never a statement per row: straight into
// the table while it holds none of their keys (an initial load), else into a staging table and one
// INSERT ... ON CONFLICT from it.
import type { DuckDBConnection } from '@duckdb/node-api';
import { resolve } from 'node:path';
import type { ExportRow } from '../core/types.ts';
import type { DatasetState } from '../exports/state.ts';
import { describeChange, initialColumns, keyColumn, latestByIdentity, MISMATCH_COLUMN, TableShape, type ShapeChange } from './columns.ts';
import { isKeyColumn, readColumns, readState } from './duckdb/catalog.ts';
import { DuckDbLockedError, messageOf, openDatabase, type Database } from './duckdb/database.ts';
import type { Writer } from './duckdb/writer.ts';
import { appendRows } from './duckdb/append-rows.ts';
import {
  addColumnSql, createTableSql, MISMATCH, PAGE_TABLE, pageTableSql, saveStateSql, tableColumn, tableNameOf, upsertSql,
  type TableColumn,
} from './duckdb/sql.ts';
import { SinkError } from './errors.ts';
import type { Sink, SinkDataset, SinkNotice, SinkPage } from './sink.ts';

export { DuckDbLockedError };

export interface DuckDbSinkOptions {
  /** The database file (created when missing, with its folder). */
  path: string;
  /** Told once per run of each table created, column added, and field whose values do not fit their column. */
  onNotice?: (notice: SinkNotice) => void;
}

/** The DuckDB sink: a Sink, plus queries on the same database. */
export interface DuckDbSink extends Sink {
  /** The database file, as an absolute path. */
  readonly target: string;
  /** Opens the file (DuckDB's lock on it: one writing process) and holds it until released. */
  lock(): Promise<{ release(): Promise<void> }>;
  /**
   * Runs SQL on the database through a connection of its own (it sees committed rows only) and
   * returns the rows as objects (BIGINT and HUGEINT as bigint, timestamps as Date). Opens the
   * database if it is not open; close() closes it.
   */
  query(sql: string): Promise<Record<string, unknown>[]>;
}

/**
 * A DuckDB database file as a sink. DuckDB lets one process write a file at a time: the file is
 * opened by lock() (or the first open()), and another process (or another sink of this one)
 * opening it meanwhile is refused with a DuckDbLockedError. Holds from lock() nest; the file is
 * closed once close() was called and every hold released.
 *
 * @example
 * ```ts
 * const sink = duckdbSink({ path: 'lender.duckdb' });
 * try {
 *   await sync(client, ['D07'], { to: sink });
 *   console.log(await sink.query('SELECT payment_status, count(*) AS n FROM d07 GROUP BY ALL'));
 * } finally {
 *   await sink.close();
 * }
 * ```
 */
export function duckdbSink(opts: DuckDbSinkOptions): DuckDbSink {
  return new DuckDbStore(opts);
}

/** A dataset's table as this run knows it. */
interface Table {
  name: string;
  key: string;
  /** The columns rows are checked against, including those a commit is about to add. */
  shape: TableShape;
  /** The columns the table has in the database, in order, as DuckDB types them. */
  stored: Map<string, TableColumn>;
  exists: boolean;
  hasStateRow: boolean;
  /** Pages to upsert before a plain insert is tried again (see #store). */
  upsertPages: number;
}

/** After a page found rows the table already held, this many pages are upserted without trying
 * a plain insert first: an incremental load updates rows page after page. */
const UPSERT_STREAK = 16;

class DuckDbStore implements DuckDbSink {
  readonly target: string;
  readonly #onNotice: ((notice: SinkNotice) => void) | undefined;
  #opening: Promise<Database> | undefined;
  #holds = 0;
  #closing = false;
  readonly #tables = new Map<string, Table>();
  /** Notices already given: each once per run. */
  readonly #told = new Set<string>();

  constructor(opts: DuckDbSinkOptions) {
    this.target = resolve(opts.path);
    this.#onNotice = opts.onNotice;
  }

  async lock(): Promise<{ release(): Promise<void> }> {
    await this.#database();
    this.#holds += 1;
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        this.#holds -= 1;
        if (this.#holds === 0 && this.#closing) await this.#shutdown();
      },
    };
  }

  location(dataset: SinkDataset): string {
    return `${this.target}#${tableNameOf(dataset)}`;
  }

  async open(dataset: SinkDataset): Promise<DatasetState | undefined> {
    const db = await this.#database();
    const table = await this.#loadTable(db.writer.connection, dataset);
    const state = await readState(db.writer.connection, dataset.key, this.target);
    table.hasStateRow = state !== undefined;
    this.#tables.set(dataset.code, table);
    return state;
  }

  async commit({ dataset, rows, state }: SinkPage): Promise<void> {
    const table = this.#tables.get(dataset.code);
    if (table === undefined) throw new SinkError(`commit of ${dataset.code} without open()`);
    const db = await this.#database();
    const latest = latestByIdentity(dataset, rows);
    const change = table.shape.observe([...latest.values()]);
    // Created with its first rows, so its columns are theirs in the service's order; a dataset
    // without any gets its table when its load completes (its state then has no open load).
    const creating = !table.exists && (latest.size > 0 || state.load === null);
    const added = table.exists || creating ? table.shape.columns.filter((c) => !table.stored.has(c.name)).map(tableColumn) : [];
    if ((table.exists || creating) && !table.stored.has(MISMATCH_COLUMN)) added.push(MISMATCH);
    const columns = creating ? creationOrder(added, latest.values(), table.key) : [...table.stored.values(), ...added];
    const write: PageWrite = {
      table, columns, rows: latest, stateSql: saveStateSql(dataset.key, JSON.stringify(state), table.hasStateRow),
      ddl: creating ? [createTableSql(table.name, columns, table.key)] : added.map((c) => addColumnSql(table.name, c)),
      cursor: dataset.cursorField,
    };
    try {
      await this.#store(db.writer, write, table.exists);
    } catch (error) {
      // The shape may name columns the rolled-back transaction did not add: read the table again.
      this.#tables.set(dataset.code, await this.#loadTable(db.writer.connection, dataset).catch(() => table));
      throw error instanceof SinkError ? error
        : new SinkError(`DuckDB could not store a page of ${dataset.code} in ${this.location(dataset)}: ${messageOf(error)}`, { cause: error });
    }
    table.stored = new Map(columns.map((c) => [c.name, c]));
    table.exists ||= creating;
    table.hasStateRow = true;
    this.#tell(dataset, table, creating, columns.length, change);
  }

  async query(sql: string): Promise<Record<string, unknown>[]> {
    const db = await this.#database();
    try {
      const result = await (await db.reader()).runAndReadAll(sql);
      return result.getRowObjectsJS() as Record<string, unknown>[];
    } catch (error) {
      throw new SinkError(`DuckDB could not run the query on ${this.target}: ${messageOf(error)}`, { cause: error });
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    if (this.#holds === 0) await this.#shutdown();
  }

  /**
   * Appends the rows straight into the table while it holds none of their keys (an initial load):
   * the cheapest path. A page that meets a stored key is rolled back and written again as an
   * upsert, and so are the pages after it for a while (an incremental load updates row after row).
   */
  async #store(writer: Writer, write: PageWrite, tableExisted: boolean): Promise<void> {
    const { table } = write;
    // A table made by this very commit holds no key yet.
    if (write.rows.size === 0 || !tableExisted) return writePage(writer, write, false);
    if (table.upsertPages > 0) {
      table.upsertPages -= 1;
      return writePage(writer, write, true);
    }
    try {
      await writePage(writer, write, false);
    } catch (error) {
      if (!/Duplicate key/.test(messageOf(error))) throw error;
      table.upsertPages = UPSERT_STREAK;
      await writePage(writer, write, true);
    }
  }

  async #loadTable(conn: DuckDBConnection, dataset: SinkDataset): Promise<Table> {
    const name = tableNameOf(dataset);
    const key = keyColumn(dataset);
    const stored = await readColumns(conn, name);
    if (stored === undefined) {
      return { name, key, shape: new TableShape(initialColumns(dataset)), stored: new Map(), exists: false, hasStateRow: false, upsertPages: 0 };
    }
    if (!(await isKeyColumn(conn, name, key))) {
      throw new SinkError(`the table ${name} in ${this.target} has no primary key ${key}, so rows cannot be upserted into it; ` +
        'it was not made by lender sync: rename or drop it.');
    }
    return {
      name, key,
      shape: new TableShape(stored.filter((c) => c.name !== MISMATCH_COLUMN)),
      stored: new Map(stored.map((c) => [c.name, c])),
      exists: true,
      hasStateRow: false,
      upsertPages: 0,
    };
  }

  #database(): Promise<Database> {
    this.#opening ??= openDatabase(this.target).catch((error: unknown) => {
      this.#opening = undefined;
      throw error;
    });
    return this.#opening;
  }

  async #shutdown(): Promise<void> {
    const opening = this.#opening;
    this.#opening = undefined;
    this.#closing = false;
    this.#tables.clear();
    const db = await opening?.catch(() => undefined);
    await db?.close();
  }

  #tell(dataset: SinkDataset, table: Table, created: boolean, columnCount: number, change: ShapeChange): void {
    if (this.#onNotice === undefined) return;
    const notices: Omit<SinkNotice, 'dataset'>[] = created
      ? [{ kind: 'table-created', message: `${table.name}: table created in ${this.target} with ${columnCount} columns` }]
      : describeChange(table.name, { added: change.added, mismatched: [] });
    notices.push(...describeChange(table.name, { added: [], mismatched: change.mismatched }));
    for (const notice of notices) {
      if (this.#told.has(notice.message)) continue;
      this.#told.add(notice.message);
      this.#onNotice({ dataset: dataset.code, ...notice });
    }
  }
}

/** What one commit writes. */
interface PageWrite {
  table: Table;
  /** The table's columns once `ddl` has run, in order. */
  columns: readonly TableColumn[];
  ddl: readonly string[];
  rows: ReadonlyMap<string, ExportRow>;
  cursor: string;
  stateSql: string;
}

/** One transaction: the new columns, the rows (appended to the table, or staged and upserted),
 * the state. Rolled back on any failure. */
async function writePage(writer: Writer, write: PageWrite, upsert: boolean): Promise<void> {
  const { table, rows, columns } = write;
  const staged = upsert && rows.size > 0;
  try {
    await writer.run([...write.ddl, ...(staged ? [pageTableSql(table.name)] : [])]);
    if (staged) {
      const appender = await writer.temporaryAppender(PAGE_TABLE);
      try {
        appendRows(appender, rows, columns, table.key);
      } finally {
        appender.closeSync();
      }
      await writer.commit([upsertSql(table.name, columns, table.key, write.cursor), write.stateSql]);
    } else {
      if (rows.size > 0) {
        const appender = await writer.appender(table.name, columns.map((c) => c.name).join('\0'));
        appendRows(appender, rows, columns, table.key);
        appender.flushSync();
      }
      await writer.commit([write.stateSql]);
    }
  } catch (error) {
    await writer.rollback();
    throw error;
  }
}

/** The columns of a new table: its key first, then the fields in the order the service sends
 * them, then any column no row of the page has yet, and `_mismatched` last. */
function creationOrder(columns: readonly TableColumn[], rows: Iterable<ExportRow>, key: string): TableColumn[] {
  const position = new Map<string, number>([[key, -1]]);
  for (const row of rows) {
    for (const name of Object.keys(row)) if (!position.has(name)) position.set(name, position.size);
  }
  const rank = (c: TableColumn) => (c.name === MISMATCH_COLUMN ? Infinity : position.get(c.name) ?? position.size);
  return columns.map((c, i) => ({ c, i })).sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i).map(({ c }) => c);
}
