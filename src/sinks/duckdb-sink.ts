// DuckDB, exactly once: one database file, a table per dataset (its code in lower case) holding one
// row per identity, and each dataset's state in the table _lender_state. A commit is one
// transaction: the page's new columns, its rows (a row never replaces a newer version of itself)
// and the state after them. A crash at any instant leaves the last committed page and its state,
// together. The tables have no index: the identities each one holds are kept in memory as hashes
// (key-set.ts, read from the table once per run), rows of new identities are appended through
// DuckDB's appender, and rows of stored ones are staged and merged (sql.ts mergeSql).
import type { DuckDBConnection } from '@duckdb/node-api';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { abortErrorFrom } from '../core/abort.ts';
import { ConfigError, firstLineOf } from '../core/errors.ts';
import { checkOptionNames } from '../core/option-names.ts';
import { withField } from '../core/own-fields.ts';
import type { ExportRow } from '../core/types.ts';
import type { DatasetState } from '../exports/state.ts';
import {
  describeChange, initialColumns, keyColumn, latestByIdentity, MISMATCH_COLUMN, TableShape, type ShapeChange,
} from './columns.ts';
import { readColumns, readKeys, readState } from './duckdb/catalog.ts';
import {
  DuckDbLockedError, isOneSelect, isShortOfMemory, memoryLimitMb, openDatabase, REOPEN_AFTER_ROWS, type Database,
} from './duckdb/database.ts';
import type { Writer } from './duckdb/writer.ts';
import { appendRows, rowsToObserve, textLength } from './duckdb/append-rows.ts';
import { KeySet } from './duckdb/key-set.ts';
import {
  addColumnSql, createTableSql, DUCKDB_NAMING, hasRowid, mergeSql, MISMATCH, PAGE_TABLE, pageTableSql, saveStateSql, tableColumn, tableNameOf,
  type TableColumn,
} from './duckdb/sql.ts';
import { SinkError } from './errors.ts';
import { storableJson } from './json-text.ts';
import type { Sink, SinkDataset, SinkNotice, SinkPage } from './sink.ts';

export { DuckDbLockedError };

export interface DuckDbSinkOptions {
  /** The database file (created when missing, with its folder). */
  path: string;
  /** Told once per run of each table created, column added, and field whose values do not fit their column. */
  onNotice?: (notice: SinkNotice) => void;
  /**
   * DuckDB is closed and the file opened again after this many rows are committed (or 16 million
   * characters of text), between two commits: DuckDB gives back only then the memory it keeps for
   * what was appended. Default 100,000; 0: never. A sink that has run a query is not reopened.
   */
  reopenAfterRows?: number;
  /**
   * A full garbage collection of the JS heap before each of DuckDB's checkpoints (at a reopening
   * and at close), so that the heap's garbage is gone when the checkpoint needs memory: a
   * 1,000,000-row sync on Node 24 peaked about 20 MB lower. Each pauses the process in proportion
   * to its live objects, long in a process with a large heap: default false; `lender sync`, the
   * REPL and notebooks turn it on.
   */
  collectGarbage?: boolean;
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
   * database if it is not open; close() stops queries still running and closes it. `signal`
   * stops the query (an AbortError).
   */
  query(sql: string, opts?: { signal?: AbortSignal }): Promise<Record<string, unknown>[]>;
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
  checkOptionNames(opts, { path: true, onNotice: true, reopenAfterRows: true, collectGarbage: true }, 'duckdbSink()');
  return new DuckDbStore(opts);
}

/** Stops the connection's statement: the query it runs then fails, as Interrupted. DuckDB
 * forgets an interrupt that comes before the statement starts, so it is sent again until
 * `running` settles. (Queries share the connection: one queued behind it may be stopped too.) */
async function interruptUntilSettled(conn: DuckDBConnection, running: Promise<unknown>): Promise<void> {
  let settled = false;
  const done = running.then(() => (settled = true), () => (settled = true));
  while (!settled) {
    conn.interrupt();
    await Promise.race([done, delay(INTERRUPT_AGAIN_MS, undefined, { ref: false })]);
  }
}
const INTERRUPT_AGAIN_MS = 50;

/** A dataset's table as this run knows it. */
interface Table {
  dataset: SinkDataset;
  name: string;
  key: string;
  /** The columns rows are checked against, including those a commit is about to add. */
  shape: TableShape;
  /** The columns the table has in the database, in order, as DuckDB types them. */
  stored: Map<string, TableColumn>;
  exists: boolean;
  hasStateRow: boolean;
  /**
   * The identities the table holds (at least: a failed commit may leave some it does not), read
   * from the table at the first commit of rows. 'unknown': the key column is not text (a table
   * made by hand), so its stored keys may not be spelled as the rows' are: every row is merged.
   */
  keys: KeySet | 'unknown' | undefined;
}

class DuckDbStore implements DuckDbSink {
  readonly target: string;
  readonly #onNotice: ((notice: SinkNotice) => void) | undefined;
  readonly #reopenAfterRows: number;
  readonly #collectGarbage: boolean;
  #opening: Promise<Database> | undefined;
  /** Aborted when the database opened by #opening is to be closed (openDatabase's `closing`). */
  #closeAsked: AbortController | undefined;
  #holds = 0;
  #closing = false;
  readonly #tables = new Map<string, Table>();
  /** Notices already given: each once per run. */
  readonly #told = new Set<string>();
  /** Something other than a SELECT ran through query(): the writer's open transaction began
   * before it, so the next commit begins a new one. */
  #queried = false;
  /** query() calls not settled yet. */
  readonly #queries = new Set<Promise<unknown>>();
  /** close() is stopping the queries still running. */
  #stopping = false;

  constructor(opts: DuckDbSinkOptions) {
    const reopen = opts.reopenAfterRows ?? REOPEN_AFTER_ROWS;
    if (!Number.isSafeInteger(reopen) || reopen < 0) throw new ConfigError(`reopenAfterRows must be a whole number, 0 or more; got ${String(opts.reopenAfterRows)}`);
    this.target = resolve(opts.path);
    this.#onNotice = opts.onNotice;
    this.#reopenAfterRows = reopen;
    this.#collectGarbage = opts.collectGarbage ?? false;
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
    await db.fitMemory(memoryLimitMb(table.stored.size));
    const state = await readState(db.writer.connection, dataset.key, this.target);
    table.hasStateRow = state !== undefined;
    this.#tables.set(dataset.code, table);
    return state;
  }

  async commit({ dataset, rows, state }: SinkPage): Promise<void> {
    if (!this.#tables.has(dataset.code)) throw new SinkError(`commit of ${dataset.code} without open()`);
    const db = await this.#database();
    if (this.#queried) {
      this.#queried = false;
      await db.writer.rollback();
    }
    const { sharedMeanwhile } = await db.reopenIfDue().catch((error: unknown) => {
      // The database is closed: the next open() opens it again (or says why it cannot).
      this.#opening = undefined;
      this.#tables.clear();
      throw error;
    });
    if (sharedMeanwhile) await this.#reloadTables(db);
    const table = this.#tables.get(dataset.code)!;
    const latest = latestByIdentity(dataset, rows);
    const change = table.shape.observe(rowsToObserve(table.shape, latest.values()));
    // Created with its first rows, so its columns are theirs in the service's order; a dataset
    // without any gets its table when its load completes (its state then has no open load).
    const creating = !table.exists && (latest.size > 0 || state.load === null);
    const added = table.exists || creating ? table.shape.columns.filter((c) => !table.stored.has(c.name)).map(tableColumn) : [];
    if ((table.exists || creating) && !table.stored.has(MISMATCH_COLUMN)) added.push(MISMATCH);
    const columns = creating ? creationOrder(added, latest.values(), table.key) : [...table.stored.values(), ...added];
    const characters = textLength(latest.values());
    try {
      // What DuckDB needs to commit and checkpoint the page: blocks of every column at once, and
      // large values in proportion (database.ts memoryLimitMb).
      await db.fitMemory(memoryLimitMb(columns.length, characters));
      const { fresh, stored } = await this.#sortRows(db, table, latest, creating);
      await writePage(db.writer, {
        homeless: table.shape.homeless,
        table, columns, fresh, stored, stateSql: saveStateSql(dataset.key, storableJson(state), table.hasStateRow),
        ddl: creating ? [createTableSql(table.name, columns)] : added.map((c) => addColumnSql(table.name, c)),
        cursor: dataset.cursorField,
      });
    } catch (error) {
      // The shape may name columns the rolled-back transaction did not add: read the table again.
      this.#tables.set(dataset.code, await this.#loadTable(db.writer.connection, dataset).catch(() => table));
      throw error instanceof SinkError ? error
        : new SinkError(`DuckDB could not store a page of ${dataset.code} in ${this.location(dataset)}: ${firstLineOf(error)}` +
          (isShortOfMemory(error) ? ` (DuckDB's memory limit: ${db.memoryMb} MB)` : ''), { cause: error });
    }
    db.wrote(latest.size, characters);
    table.stored = new Map(columns.map((c) => [c.name, c]));
    table.exists ||= creating;
    table.hasStateRow = true;
    this.#tell(dataset, table, creating, columns.length, change);
  }

  async query(sql: string, opts: { signal?: AbortSignal } = {}): Promise<Record<string, unknown>[]> {
    const running = this.#query(sql, opts.signal);
    this.#queries.add(running);
    try {
      return await running;
    } finally {
      this.#queries.delete(running);
    }
  }

  async #query(sql: string, signal: AbortSignal | undefined): Promise<Record<string, unknown>[]> {
    if (signal?.aborted) throw abortErrorFrom(signal);
    let db: Database;
    let reader: DuckDBConnection;
    try {
      db = await this.#database();
      reader = await db.reader();
    } catch (error) {
      throw error instanceof SinkError ? error
        : new SinkError(`DuckDB could not open ${this.target} for the query: ${firstLineOf(error)}`, { cause: error });
    }
    // Aborted while the database opened: the listener below would never hear of it.
    if (signal?.aborted) throw abortErrorFrom(signal);
    const running = reader.runAndReadAll(sql);
    const interrupt = () => void interruptUntilSettled(reader, running);
    signal?.addEventListener('abort', interrupt, { once: true });
    try {
      const result = await running;
      // Rows made here, not by getRowObjectsJS: a column named __proto__ is a field of them.
      const names = result.columnNames();
      return result.getRowsJS().map((values) => {
        const row: Record<string, unknown> = {};
        values.forEach((value, i) => withField(row, names[i]!, value));
        return row;
      });
    } catch (error) {
      if (signal?.aborted) throw abortErrorFrom(signal);
      if (this.#stopping) throw new SinkError(`The query on ${this.target} was stopped: the sink was closed while it ran.`, { cause: error });
      // A SELECT refused for want of memory (one over large values, say) changed nothing: it
      // runs again with twice the limit.
      if (isShortOfMemory(error) && !firstLineOf(error).startsWith('FATAL') && (await isOneSelect(reader, sql)) &&
        (await db.fitMemory(db.memoryMb * 2).catch(() => false))) {
        return this.#query(sql, signal);
      }
      throw new SinkError(`DuckDB could not run the query on ${this.target}: ${firstLineOf(error)}`, { cause: error });
    } finally {
      signal?.removeEventListener('abort', interrupt);
      // Anything but one SELECT may have written rows the key sets do not know: they are read
      // again from the tables at the next commit, in a transaction begun after this.
      if (!(await isOneSelect(reader, sql))) {
        for (const table of this.#tables.values()) table.keys = undefined;
        this.#queried = true;
      }
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    if (this.#holds === 0) await this.#shutdown();
  }

  /**
   * The page's rows of identities the table has never held (appended as they are) and those of
   * identities it may hold (merged). The identities are added to the table's set before the write:
   * the set may then hold identities a failed commit did not store (their rows are merged), never
   * miss one the table holds.
   */
  async #sortRows(
    db: Database, table: Table, rows: ReadonlyMap<string, ExportRow>, creating: boolean,
  ): Promise<{ fresh: ReadonlyMap<string, ExportRow>; stored: ReadonlyMap<string, ExportRow> }> {
    const none = new Map<string, ExportRow>();
    if (rows.size === 0) return { fresh: none, stored: none };
    if (creating) table.keys = new KeySet(rows.size);
    else if (table.keys === undefined) {
      const column = table.stored.get(table.key);
      // Read through a connection of its own: a failed read there (DuckDB's memory limit) cannot
      // abort the writer's transaction. It sees what the writer does: the writer holds nothing
      // uncommitted between commits, and began its transaction after any write through query().
      table.keys = column?.sql === 'VARCHAR'
        ? await db.withConnection((conn) => readKeys(conn, table.name, table.key, hasRowid(table.stored.values())))
        : 'unknown';
    }
    const keys = table.keys;
    if (keys === 'unknown') return { fresh: none, stored: rows };
    // Each key hashed once: added, and told whether it was there (a page's keys are distinct).
    let stored: Map<string, ExportRow> | undefined;
    for (const [id, row] of rows) {
      if (!keys.add(id)) (stored ??= new Map()).set(id, row);
    }
    if (stored === undefined) return { fresh: rows, stored: none };
    const fresh = new Map<string, ExportRow>();
    for (const [id, row] of rows) if (!stored.has(id)) fresh.set(id, row);
    return { fresh, stored };
  }

  async #loadTable(conn: DuckDBConnection, dataset: SinkDataset): Promise<Table> {
    const name = tableNameOf(dataset);
    const key = keyColumn(dataset);
    const stored = await readColumns(conn, name);
    if (stored === undefined) {
      return { dataset, name, key, shape: new TableShape(initialColumns(dataset), DUCKDB_NAMING), stored: new Map(), exists: false, hasStateRow: false, keys: undefined };
    }
    if (!stored.some((c) => c.name === key)) {
      throw new SinkError(`the table ${name} in ${this.target} has no column ${key}, so its rows cannot be told apart; ` +
        'it was not made by lender sync: rename or drop it.');
    }
    return {
      dataset, name, key,
      shape: new TableShape(stored.filter((c) => c.name !== MISMATCH_COLUMN), DUCKDB_NAMING),
      stored: new Map(stored.map((c) => [c.name, c])),
      exists: true,
      hasStateRow: false,
      keys: undefined,
    };
  }

  /** Another process had the file while it was reopened: what this run knows of its tables (the
   * identities, the columns, whether a state row is there) is read from them again. */
  async #reloadTables(db: Database): Promise<void> {
    for (const [code, table] of this.#tables) {
      const fresh = await this.#loadTable(db.writer.connection, table.dataset);
      fresh.hasStateRow = (await readState(db.writer.connection, table.dataset.key, this.target)) !== undefined;
      this.#tables.set(code, fresh);
    }
  }

  #database(): Promise<Database> {
    if (this.#opening === undefined) {
      const closing = new AbortController();
      this.#closeAsked = closing;
      this.#opening = openDatabase(this.target, {
        reopenAfterRows: this.#reopenAfterRows, collectGarbage: this.#collectGarbage, closing: closing.signal,
      }).catch((error: unknown) => {
        this.#opening = undefined;
        throw error;
      });
    }
    return this.#opening;
  }

  async #shutdown(): Promise<void> {
    // Said before the open under way (if any) ends: another sink of this process opening the
    // file meanwhile waits for this close rather than being refused.
    this.#closeAsked?.abort();
    this.#closeAsked = undefined;
    const opening = this.#opening;
    this.#opening = undefined;
    this.#closing = false;
    this.#tables.clear();
    const db = await opening?.catch(() => undefined);
    // A connection closed under a running statement leaves its promise unsettled for good: the
    // queries still running are stopped, and have failed, before DuckDB is closed.
    await db?.close(async () => {
      if (this.#queries.size === 0) return;
      this.#stopping = true;
      try {
        const reader = await db.reader().catch(() => undefined);
        const queries = Promise.allSettled([...this.#queries]);
        if (reader !== undefined) await interruptUntilSettled(reader, queries);
        await queries;
      } finally {
        this.#stopping = false;
      }
    });
  }

  #tell(dataset: SinkDataset, table: Table, created: boolean, columnCount: number, change: ShapeChange): void {
    if (this.#onNotice === undefined) return;
    const notices: Omit<SinkNotice, 'dataset'>[] = created
      ? [{ kind: 'table-created', message: `${table.name}: table created in ${this.target} with ${columnCount} columns` }]
      : describeChange(table.name, { added: change.added, mismatched: [] });
    notices.push(...describeChange(table.name, { added: [], mismatched: change.mismatched, homeless: change.homeless }));
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
  /** Fields without a column of their own: their values go to `_mismatched`. */
  homeless: readonly string[];
  /** The table's columns once `ddl` has run, in order. */
  columns: readonly TableColumn[];
  ddl: readonly string[];
  /** Rows of identities the table does not hold: appended. */
  fresh: ReadonlyMap<string, ExportRow>;
  /** Rows of identities it may hold: staged and merged. */
  stored: ReadonlyMap<string, ExportRow>;
  cursor: string;
  stateSql: string;
}

/** One transaction: the new columns, the rows (appended to the table, or staged and merged), the
 * state. Rolled back on any failure. */
async function writePage(writer: Writer, write: PageWrite): Promise<void> {
  const { table, fresh, stored, columns } = write;
  try {
    if (write.ddl.length > 0 || stored.size > 0) await writer.run([...write.ddl, ...(stored.size > 0 ? [pageTableSql(table.name)] : [])]);
    if (fresh.size > 0) {
      const appender = await writer.appender(table.name, columns.map((c) => c.name).join('\0'));
      await appendRows(appender, fresh, columns, table.key, write.homeless);
      appender.flushSync();
    }
    if (stored.size > 0) {
      const appender = await writer.temporaryAppender(PAGE_TABLE);
      try {
        await appendRows(appender, stored, columns, table.key, write.homeless);
      } finally {
        appender.closeSync();
      }
    }
    await writer.commit([...(stored.size > 0 ? mergeSql(table.name, table.key, write.cursor, hasRowid(columns)) : []), write.stateSql]);
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
