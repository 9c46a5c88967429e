// The statements of one PgStore transaction: tables made on demand, a page of rows merged into
// its table, a state saved, statements of the caller's own.
//
// Round trips are what a commit costs most while the process is busy reading the next page: each
// one waits for the event loop. So statements whose results are not needed (BEGIN, the merge,
// the state, COMMIT) are not sent on their own: they wait in a batch that goes, as one
// multi-statement query, in front of the next statement that needs a round trip anyway (the
// page's COPY) or with COMMIT. A page so costs three round trips (BEGIN + COPY: two; merge +
// state + COMMIT: one) instead of six.
//
// The merge (COPY into a staging table, then INSERT ... ON CONFLICT) is most of the database's
// work. A page whose identities are all new needs none of it: it is copied straight into the
// table, behind a savepoint, and only when that COPY meets a stored identity (a unique violation)
// is it rolled back to the savepoint and merged. In an initial load nearly every page is new;
// where pages keep meeting stored rows (an incremental load), the next pages go to the merge at
// once, for longer after each miss.
import { createHash } from 'node:crypto';
import type { PoolClient, QueryResult, QueryResultRow } from 'pg';
import type { ConfigError } from '../../core/errors.ts';
import type { ExportRow } from '../../core/types.ts';
import type { DatasetState } from '../../exports/state.ts';
import {
  describeChange, fits, initialColumns, isBookkeepingColumn, keyColumn, MISMATCH_COLUMN, ROW_KEY_COLUMN, TableShape, type Column,
} from '../columns.ts';
import { SinkError } from '../errors.ts';
import { storableJson } from '../json-text.ts';
import type { SinkDataset, SinkNotice } from '../sink.ts';
import { UnstorableValueError } from './copy-text.ts';
import { encodePage, type EncodedPage } from './encode-page.ts';
import {
  addColumnsSql, dollarQuoted, copyIntoSql, createStageSql, createStateTableSql, createTableSql, ident, mergeSql, pgColumnOf, qualified,
  POSTGRES_NAMING, saveStateSql, shownName, sqlName, withinLimit, type PgColumn,
} from './sql.ts';

export const STATE_TABLE = '_lender_state';
const DDL_LOCK_TIMEOUT = '60s';

/** The table name of a dataset: its code lower-cased. */
export function datasetTable(dataset: Pick<SinkDataset, 'code'>): string {
  return dataset.code.toLowerCase();
}

const STAGE_PREFIX = '_lender_stage_';
/** PostgreSQL cuts names past 63 bytes, silently: a longer table (or staging table) name would
 * be another table's, and a stored identity would not be recognised in its errors. */
const MAX_TABLE_BYTES = 63 - STAGE_PREFIX.length;

/** A table as a store knows it: its columns (the shape) and whether the store created it. */
export interface KnownTable {
  shape: TableShape;
  /** Created by this store (this run): its columns are not news, the table-created notice says it. */
  fresh: boolean;
  /** Fields whose misfits were observed (and told) already. */
  knownMismatches: Set<string>;
  /** Whether the next pages are tried straight into the table (see the top of this file). */
  straightIn: StraightIn;
}

/** After a page copied straight in met a stored identity, the next `skip` pages are merged; each
 * miss in a row doubles that, up to MAX_SKIP, and a page that goes straight in resets it. */
interface StraightIn {
  skip: number;
  misses: number;
}

const MAX_SKIP = 64;
const SAVEPOINT = 'lender_straight_in';
/** PostgreSQL's code for a unique violation. */
const UNIQUE_VIOLATION = '23505';

/** What a transaction needs of its store. */
export interface StoreContext {
  readonly schema: string;
  /** The database and schema, as messages name them (no password). */
  readonly target: string;
  readonly tables: Map<string, KnownTable>;
  /** Tables this store created (committed): their columns stay no news for the store's life. */
  readonly created: Set<string>;
  /** The error as a SinkError naming the store, with the password cut out (a ConfigError of ours as it is). */
  error(error: unknown, doing: string): SinkError | ConfigError;
  /** The staging tables a connection has, by name, with the columns they were made with. */
  stagesOf(client: PoolClient): Map<string, string>;
}

/** What a transaction did that its store acts on once it committed or rolled back. */
export interface TxEffects {
  notices: SinkNotice[];
  /** Tables whose definition (or the store's knowledge of it) the transaction changed. */
  touched: Set<string>;
  /** Tables it created. */
  created: Set<string>;
}

/** The statements of one PgStore transaction: made by `store.transaction(fn)`, valid inside `fn`. */
export class PgTransaction {
  readonly #client: PoolClient;
  readonly #store: StoreContext;
  readonly #effects: TxEffects;
  /** Statements sent with the next round trip: BEGIN first, then those whose results are not needed. */
  readonly #batch: { sql: string; doing: string }[] = [{ sql: 'BEGIN', doing: 'starting a transaction' }];
  #begun = false;
  #ddlLocked = false;
  /** Staging tables filled in this transaction. */
  readonly #staged = new Set<string>();

  /** @internal Made by PgStore.transaction. */
  constructor(store: StoreContext, client: PoolClient, effects: TxEffects) {
    this.#store = store;
    this.#client = client;
    this.#effects = effects;
  }

  /** A statement of the caller's own, in this transaction; failures come as SinkErrors. */
  async query<R extends QueryResultRow = QueryResultRow>(sql: string, params: unknown[] = []): Promise<QueryResult<R>> {
    return this.#run<R>(sql, params, 'a statement');
  }

  /** The dataset's table as it is typed in SQL: what messages name, and the key of the store's `tables`. */
  tableName(dataset: Pick<SinkDataset, 'code'>): string {
    return shownName(this.#store.schema, datasetTable(dataset));
  }

  /**
   * Creates what is missing of the schema, the state table and the dataset's table (under the
   * DDL lock, committed with the transaction) and learns the table's columns. With `create`
   * false a missing dataset table is left for later (undefined); an existing one is checked and
   * learnt all the same. A table made by hand is refused (a SinkError, before anything is
   * written) unless its rows can be told apart: a text identity column with a primary key or
   * unique index of its own; `_mismatched` is added to it when missing.
   */
  async ensureTable(dataset: SinkDataset, create = true): Promise<TableShape | undefined> {
    const table = this.tableName(dataset);
    const known = this.#store.tables.get(table);
    if (known !== undefined) return known.shape;
    const schema = this.#store.schema;
    const name = datasetTable(dataset);
    if (Buffer.byteLength(name) > MAX_TABLE_BYTES) {
      throw new SinkError(`the dataset code ${dataset.code} is too long for a PostgreSQL table: at most ${MAX_TABLE_BYTES} bytes`);
    }
    // Looked up first, without the lock: where everything exists (the usual case, or a database
    // prepared by its owner for a user without CREATE rights) nothing is created.
    let found = await this.#lookUp(name);
    let created = false;
    if (!found.schema || !found.state || (!found.table && create)) {
      await this.#lockDdl();
      // Read again under the lock, by a fresh query of the catalog: another process may have
      // created them while this one waited (see #lookUp).
      found = await this.#lookUp(name);
      this.#effects.touched.add(table);
      if (!found.schema) await this.#run(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`, [], 'creating the schema');
      if (!found.state) await this.#run(createStateTableSql(qualified(schema, STATE_TABLE)), [], 'creating the state table');
      if (!found.table && create) {
        await this.#run(createTableSql(qualified(schema, name), initialColumns(dataset), keyColumn(dataset)), [], `creating ${table}`);
        created = true;
        this.#effects.created.add(table);
        this.#effects.notices.push({ dataset: dataset.code, kind: 'table-created', message: `${table}: new table` });
      }
    }
    if (!found.table && !created) return undefined;
    const columns = await this.#usableColumns(dataset);
    const shape = new TableShape(columns, POSTGRES_NAMING);
    this.#store.tables.set(table, {
      shape, fresh: created || this.#store.created.has(table), knownMismatches: new Set(), straightIn: { skip: 0, misses: 0 },
    });
    return shape;
  }

  /**
   * Whether the schema, the state table and the dataset's table exist, as the catalog holds them
   * now. Read from pg_class itself rather than with to_regclass: that goes through the session's
   * catalog cache, which keeps "no such table" from an earlier lookup in this transaction until a
   * lock on a table makes it catch up, so a table another process committed while this one waited
   * for the DDL lock went unseen (and was "created" a second time: a false new-table notice).
   */
  async #lookUp(name: string): Promise<{ schema: boolean; state: boolean; table: boolean }> {
    const r = await this.#run<{ s: boolean; st: boolean; t: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS s, ' +
        'EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2) AS st, ' +
        'EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $3) AS t',
      [this.#store.schema, STATE_TABLE, name], 'looking for the tables',
    );
    const row = r.rows[0]!;
    return { schema: row.s, state: row.st, table: row.t };
  }

  /**
   * The columns of the dataset's table once it is fit to load into: its identity column is there,
   * is text, and has a unique index of its own (else incremental rows would be appended beside
   * their earlier versions instead of replacing them), and `_mismatched` is there (added when
   * missing, as any new column is).
   */
  async #usableColumns(dataset: SinkDataset): Promise<PgColumn[]> {
    const table = this.tableName(dataset);
    const key = keyColumn(dataset);
    let stored = await this.#storedColumns(dataset);
    const identity = stored.find((c) => c.name === key);
    const where = `the table ${table} in ${this.#store.target}`;
    if (identity === undefined) {
      throw new SinkError(`${where} has no column ${key}, so its rows cannot be told apart; it was not made by lender sync: rename or drop it.`);
    }
    if (identity.sql !== 'text' && identity.sql !== 'character varying') {
      throw new SinkError(`${where} has its identity column ${key} as ${identity.sql}, which may not hold every identity; ` +
        `make it text first: ALTER TABLE ${this.tableName(dataset)} ALTER COLUMN ${sqlName(key)} TYPE text`);
    }
    if (!identity.unique) {
      throw new SinkError(`${where} has no primary key or unique index on ${key} alone, so changed rows would be added beside their ` +
        `earlier versions instead of replacing them; add one first: CREATE UNIQUE INDEX ON ${this.tableName(dataset)} (${sqlName(key)})`);
    }
    if (!stored.some((c) => c.name === MISMATCH_COLUMN)) {
      await this.#lockDdl();
      this.#effects.touched.add(table);
      await this.#run(addColumnsSql(qualified(this.#store.schema, datasetTable(dataset)), [{ name: MISMATCH_COLUMN, type: 'json' }]), [], `adding columns to ${table}`);
      this.#effects.notices.push({ dataset: dataset.code, kind: 'column-added', message: `${table}: new column ${MISMATCH_COLUMN} (json)` });
      stored = await this.#storedColumns(dataset);
    }
    return dataColumns(stored);
  }

  /**
   * Stores rows of the dataset: each replaces the stored row of its identity unless that one is
   * newer by the cursor field; within the rows, the newest version of an identity wins. New fields become
   * new columns. Returns the number of distinct identities in the rows. Rows whose identities
   * are all new are copied straight in; otherwise the merge runs with the next statement that
   * needs a round trip, at the latest with COMMIT, and its failure fails that statement or the
   * commit.
   */
  async mergeRows(dataset: SinkDataset, rows: readonly ExportRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const table = this.tableName(dataset);
    await this.ensureTable(dataset);
    let known = this.#store.tables.get(table)!;
    const tryStraightIn = known.straightIn.skip === 0;
    if (!tryStraightIn) known.straightIn.skip -= 1;
    const order = tryStraightIn ? 'key' : 'rows';
    let page = this.#encode(dataset, rows, known, false, order);
    if (page === undefined) {
      known = await this.#observe(dataset, rows, known);
      page = this.#encode(dataset, rows, known, true, order)!;
    }
    for (const name of page.mismatched) known.knownMismatches.add(name);

    const staged = stagedColumns(dataset, known.shape);
    if (tryStraightIn) {
      const copied = await this.#copyStraightIn(dataset, staged, page.text);
      known.straightIn.misses = copied ? 0 : known.straightIn.misses + 1;
      known.straightIn.skip = copied ? 0 : Math.min(MAX_SKIP, 2 ** (known.straightIn.misses - 1));
      if (copied) return page.rows;
    }
    const stage = this.#stage(dataset, staged);
    await this.#copy(copyIntoSql(stage, staged), page.text);
    const key = keyColumn(dataset);
    const cursor = staged.some((c) => c.name === dataset.cursorField) && dataset.cursorField !== key ? dataset.cursorField : undefined;
    this.#defer(mergeSql(qualified(this.#store.schema, datasetTable(dataset)), stage, staged, key, cursor), `merging rows into ${table}`);
    return page.rows;
  }

  /** Saves a state document under `key` (a dataset's state: its code); sent with the commit. */
  async saveState(key: string, state: DatasetState): Promise<void> {
    // Inlined (dollar-quoted) rather than a parameter, so it can wait in the batch.
    this.#defer(saveStateSql(qualified(this.#store.schema, STATE_TABLE), dollarQuoted(key), dollarQuoted(storableJson(state))), 'saving the state');
  }

  /** The state saved under `key`, as this transaction sees it (with a lock on the row when
   * `forUpdate`); undefined when there is none. */
  async loadState(key: string, forUpdate = false): Promise<DatasetState | undefined> {
    const sql = `SELECT state FROM ${qualified(this.#store.schema, STATE_TABLE)} WHERE key = $1${forUpdate ? ' FOR UPDATE' : ''}`;
    const r = await this.#run<{ state: DatasetState }>(sql, [key], 'reading the state');
    return r.rows[0]?.state;
  }

  /** @internal The batch and COMMIT in one round trip; whether the server committed. */
  async commit(): Promise<boolean> {
    this.#defer('COMMIT', 'committing');
    const results = await this.#flush();
    // COMMIT of a transaction in which a statement failed (its error swallowed) answers ROLLBACK.
    return results.at(-1)?.command === 'COMMIT';
  }

  /** @internal Whether BEGIN was sent: only then is there anything to roll back. */
  get begun(): boolean {
    return this.#begun;
  }

  /** The page as COPY text; undefined when it brings news for the table's shape (unless settled). */
  #encode(dataset: SinkDataset, rows: readonly ExportRow[], known: KnownTable, settled: boolean, order: 'rows' | 'key') {
    const table = this.tableName(dataset);
    const dataColumns = known.shape.columns.filter((c) => !isBookkeepingColumn(c.name));
    let page: EncodedPage;
    try {
      page = encodePage(dataset, rows, { dataColumns, knownMismatches: known.knownMismatches, homeless: new Set(known.shape.homeless) }, settled, order);
    } catch (error) {
      if (error instanceof UnstorableValueError) throw new SinkError(`${table}: ${error.message}`);
      throw error;
    }
    return page.kind === 'news' ? undefined : page;
  }

  /**
   * A page with new fields or first misfits: the shape observes it, new fields become columns
   * (under the DDL lock, in this transaction) and notices are kept for the commit.
   */
  async #observe(dataset: SinkDataset, rows: readonly ExportRow[], known: KnownTable): Promise<KnownTable> {
    const table = this.tableName(dataset);
    // What is learnt here (columns, misfits told) holds only if the transaction commits.
    this.#effects.touched.add(table);
    let change = known.shape.observe(rows);
    if (change.added.length > 0) {
      await this.#lockDdl();
      // Another process may have added some of these fields first (workers of one load), maybe
      // with another type: the table decides, and what it had already is learnt, not news.
      const before = await this.#columnsOf(dataset);
      const missing = change.added.filter((c) => !before.some((a) => a.name === c.name));
      if (missing.length > 0) {
        await this.#run(addColumnsSql(qualified(this.#store.schema, datasetTable(dataset)), missing), [], `adding columns to ${table}`);
      }
      if (missing.length < change.added.length) {
        known = { ...known, shape: new TableShape([...before, ...missing], POSTGRES_NAMING) };
        this.#store.tables.set(table, known);
        const again = known.shape.observe(rows);
        change = { added: missing, mismatched: again.mismatched, homeless: again.homeless };
      }
    }
    for (const notice of describeChange(table, change)) {
      // Columns of a table this run created are not news: the table-created notice says it.
      if (notice.kind === 'column-added' && known.fresh) continue;
      this.#effects.notices.push({ dataset: dataset.code, ...notice });
    }
    const told = new Set(change.mismatched.map((m) => m.name));
    for (const column of beyondLimits(rows, known.shape.columns, known.knownMismatches)) {
      if (told.has(column.name)) continue;
      this.#effects.notices.push({
        dataset: dataset.code, kind: 'type-changed',
        message: `${table}: ${column.name} had a value that does not fit its ${column.sql ?? column.type} column; such values are kept in ${MISMATCH_COLUMN}`,
      });
    }
    return known;
  }

  /**
   * The connection's staging table for the dataset, with exactly these columns, as a quoted name.
   * It lives as long as the connection and is emptied at each commit: creating a table per page
   * cost more than the COPY itself. Made anew when the columns changed. The statements that make
   * or empty it go with the COPY.
   */
  #stage(dataset: SinkDataset, columns: readonly PgColumn[]): string {
    const name = `${STAGE_PREFIX}${datasetTable(dataset)}`;
    const quoted = `pg_temp.${ident(name)}`;
    const stages = this.#store.stagesOf(this.#client);
    const signature = JSON.stringify(columns);
    if (stages.get(name) !== signature) {
      this.#defer(`DROP TABLE IF EXISTS ${quoted}`, 'replacing the staging table');
      this.#defer(createStageSql(name, columns), 'creating the staging table');
      stages.set(name, signature);
    } else if (this.#staged.has(name)) {
      // Merged from already in this transaction: it still holds those rows.
      this.#defer(`TRUNCATE ${quoted}`, 'emptying the staging table');
    }
    this.#staged.add(name);
    return quoted;
  }

  /** COPY of the text, with the waiting batch in front of it in the same round trip. */
  async #copy(sql: string, text: string): Promise<void> {
    const batch = [...this.#take(), { sql, doing: 'copying rows' }];
    try {
      await this.#sendCopy(batch, text);
    } catch (error) {
      throw this.#store.error(error, describeBatch(batch));
    }
  }

  /**
   * The page's COPY straight into the dataset's table, behind a savepoint. False when a line's
   * identity is stored already: the COPY is then undone (to the savepoint), and the transaction
   * is as it was before it.
   */
  async #copyStraightIn(dataset: SinkDataset, columns: readonly Column[], text: string): Promise<boolean> {
    const batch = [
      ...this.#take(),
      { sql: `SAVEPOINT ${SAVEPOINT}`, doing: 'marking a savepoint' },
      { sql: copyIntoSql(qualified(this.#store.schema, datasetTable(dataset)), columns), doing: 'copying rows' },
    ];
    try {
      await this.#sendCopy(batch, text);
    } catch (error) {
      if (!this.#isStoredIdentity(error, dataset)) throw this.#store.error(error, describeBatch(batch));
      // A statement of the batch before the savepoint cannot have failed so (none inserts
      // without ON CONFLICT), but if one did, the savepoint is not there: its error stands.
      await this.#client.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`).catch(() => {
        throw this.#store.error(error, describeBatch(batch));
      });
      return false;
    }
    this.#defer(`RELEASE SAVEPOINT ${SAVEPOINT}`, 'releasing the savepoint');
    return true;
  }

  /** Whether the error is a unique violation in the dataset's table (a stored identity). */
  #isStoredIdentity(error: unknown, dataset: SinkDataset): boolean {
    const e = error as { code?: unknown; schema?: unknown; table?: unknown };
    return e.code === UNIQUE_VIOLATION && e.schema === this.#store.schema && e.table === datasetTable(dataset);
  }

  /** Sends the statements, the last a COPY ... FROM STDIN, as one query, then the text. */
  async #sendCopy(batch: readonly { sql: string }[], text: string): Promise<void> {
    const { from: copyFrom } = await import('pg-copy-streams');
    await new Promise<void>((resolve, reject) => {
      const stream = this.#client.query(copyFrom(batch.map((s) => s.sql).join(';\n')));
      stream.once('error', reject);
      stream.once('finish', resolve);
      stream.end(text);
    });
  }

  /**
   * One lock per schema for creating and altering tables, held to the end of the transaction.
   * Waits for locks are bounded from here on: an ALTER TABLE queued behind someone's long query
   * on the table would otherwise hold up every reader and writer of it behind itself.
   */
  async #lockDdl(): Promise<void> {
    if (this.#ddlLocked) return;
    this.#defer(`SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT}'`, 'bounding lock waits');
    const digest = createHash('sha256').update(`lender-streams ddl ${this.#store.schema}`).digest();
    await this.#run('SELECT pg_advisory_xact_lock($1::bigint)', [digest.readBigInt64BE(0).toString()], 'waiting for the schema lock');
    this.#ddlLocked = true;
  }

  /** The table's columns as they are in the database (without `_mismatched`). */
  async #columnsOf(dataset: SinkDataset): Promise<PgColumn[]> {
    return dataColumns(await this.#storedColumns(dataset));
  }

  /**
   * Every column of the table as the catalog holds it now (by name, not through to_regclass: see
   * #lookUp), with whether a unique index, immediate and without a condition or expression,
   * covers that column alone: what INSERT ... ON CONFLICT (column) needs.
   */
  async #storedColumns(dataset: SinkDataset): Promise<(PgColumn & { unique: boolean })[]> {
    const r = await this.#run<{ name: string; type: string; builtin: boolean; unique: boolean }>(
      'SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, ' +
        "EXISTS (SELECT 1 FROM pg_type t WHERE t.oid = a.atttypid AND t.typnamespace = 'pg_catalog'::regnamespace AND t.typtype = 'b') AS builtin, " +
        'EXISTS (SELECT 1 FROM pg_index i ' +
        'WHERE i.indrelid = c.oid AND i.indisunique AND i.indimmediate AND i.indisvalid AND i.indnkeyatts = 1 ' +
        'AND i.indkey[0] = a.attnum AND i.indpred IS NULL AND i.indexprs IS NULL) AS unique ' +
        'FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid ' +
        'WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum',
      [this.#store.schema, datasetTable(dataset)], 'reading the columns',
    );
    return r.rows.map((c) => ({ ...pgColumnOf(c.name, c.type, c.builtin), unique: c.unique }));
  }

  #defer(sql: string, doing: string): void {
    this.#batch.push({ sql, doing });
  }

  /** The waiting batch, emptied: about to be sent. */
  #take(): { sql: string; doing: string }[] {
    const batch = this.#batch.splice(0);
    if (batch[0]?.sql === 'BEGIN') this.#begun = true;
    return batch;
  }

  /** Sends the waiting batch as one multi-statement query. */
  async #flush(): Promise<QueryResult[]> {
    if (this.#batch.length === 0) return [];
    const batch = this.#take();
    try {
      const result = (await this.#client.query(batch.map((s) => s.sql).join(';\n'))) as QueryResult | QueryResult[];
      return Array.isArray(result) ? result : [result];
    } catch (error) {
      throw this.#store.error(error, describeBatch(batch));
    }
  }

  async #run<R extends QueryResultRow = QueryResultRow>(sql: string, params: unknown[], doing: string): Promise<QueryResult<R>> {
    await this.#flush();
    try {
      return await this.#client.query<R>(sql, params);
    } catch (error) {
      throw this.#store.error(error, doing);
    }
  }
}

/** The stored columns as the table's shape takes them: without `_mismatched`, without the index. */
function dataColumns(stored: readonly (PgColumn & { unique: boolean })[]): PgColumn[] {
  return stored.filter((c) => c.name !== MISMATCH_COLUMN).map(({ unique: _, ...column }) => column);
}

/** Columns with a limit (a narrower column made by hand) that a value of the rows, of the
 * column's type, does not fit, unless known already: TableShape sees types, not limits. */
function beyondLimits(rows: readonly ExportRow[], columns: readonly PgColumn[], known: ReadonlySet<string>): PgColumn[] {
  const limited = columns.filter((c) => c.limit !== undefined && !known.has(c.name));
  return limited.filter((c) => rows.some((row) => {
    const value = Object.hasOwn(row, c.name) ? row[c.name] : undefined;
    return fits(value, c.type) && !withinLimit(value, c.limit);
  }));
}

/** The columns COPY fills: the 'content' key when there is one, the data columns, `_mismatched`. */
function stagedColumns(dataset: SinkDataset, shape: TableShape): Column[] {
  return [
    ...(keyColumn(dataset) === ROW_KEY_COLUMN ? [{ name: ROW_KEY_COLUMN, type: 'text' as const }] : []),
    ...shape.columns.filter((c) => !isBookkeepingColumn(c.name)),
    { name: MISMATCH_COLUMN, type: 'json' },
  ];
}

/** What a batch was doing, for an error message: its statements' purposes, BEGIN left out. */
function describeBatch(batch: readonly { sql: string; doing: string }[]): string {
  const doing = batch.filter((s) => s.sql !== 'BEGIN').map((s) => s.doing);
  return doing.length === 0 ? 'starting a transaction' : doing.join(', ');
}
