// PgStore: the PostgreSQL side of the sink, usable on its own by anything that must merge a page of
// rows and write some other rows of its own in one transaction (the sink: a dataset's state; the
// workers sharing a backfill: a lease).
//
//   const store = await PgStore.connect({ connectionString, env, schema: 'lender', onNotice });
//   await store.ensureTable(dataset);                  // schema, state table, dataset table (checked)
//   const state = await store.loadState(dataset.key);  // undefined: never committed
//   await store.transaction(async (tx) => {
//     await tx.query('SELECT ... FOR UPDATE', [...]);  // anything of the caller's own, in order
//     await tx.mergeRows(dataset, rows);               // COPY into a temporary table; the upsert waits
//     await tx.saveState(dataset.key, state);          // waits too
//   });                                                // upsert + state + COMMIT in one round trip
//   await store.close();
//
// Statements whose results are not needed (the upsert of mergeRows, saveState) are batched and
// sent in order with the next statement that needs a round trip, at the latest with COMMIT, so
// their failure shows there: a caller's `tx.query` after a merge sees the merged rows. When `fn`
// throws, nothing of the transaction stays.
//
// Tables: `<schema>.<code lower-cased>` per dataset, keyed by public_id (or `_row_key` for a
// dataset whose public_id is not unique), columns typed as columns.ts says, `_mismatched` for
// values that did not fit; `<schema>._lender_state(key, state, updated_at)`.
//
// Several processes may write one database at once: tables and columns are created under an
// advisory lock (CREATE ... IF NOT EXISTS alone can still collide on the catalog), and merges
// take their row locks in identity order, so overlapping pages wait for each other, never deadlock.
// A caller's own row locks should be taken in one order across processes too (its own lease row
// first, say), for the same reason.
import type { Pool, PoolClient } from 'pg';
import type { DatasetState } from '../../exports/state.ts';
import { ConfigError } from '../../core/errors.ts';
import { SinkError } from '../errors.ts';
import type { SinkDataset, SinkNotice } from '../sink.ts';
import { describeConnection, findPassword, resolveConnection, sinkErrorOf, type PgConnectionOptions, type PgSettings } from './connection.ts';
import { qualified, shownName } from './sql.ts';
import { datasetTable, PgTransaction, STATE_TABLE, type StoreContext, type TxEffects } from './transaction.ts';

export { datasetTable, PgTransaction, STATE_TABLE };
export const DEFAULT_SCHEMA = 'lender';
const CONNECT_TIMEOUT_MS = 30_000;

export interface PgStoreOptions extends PgConnectionOptions {
  /** Schema of the tables, created when missing. Default 'lender'. */
  schema?: string;
  /** New tables and columns, values that did not fit their column: each told once per store. */
  onNotice?: (notice: SinkNotice) => void;
  /** Connections kept open at most (default 1); transactions beyond it wait for one (at most
   * 30 s, as for connecting). */
  maxConnections?: number;
  /** Shown in pg_stat_activity. Default 'lender-streams'. */
  applicationName?: string;
}

/** What messages call the store: the database without password, and the schema. */
export function describeStore(settings: Pick<PgSettings, 'host' | 'port' | 'user' | 'database'>, schema: string): string {
  return `${describeConnection(settings)} (schema ${schema})`;
}

/** The schema, or a ConfigError (a setting to fix, like any bad option): `what` names it. */
export function checkSchemaName(schema: string, what = 'the PostgreSQL schema'): string {
  if (schema === '' || schema.includes('\u0000') || Buffer.byteLength(schema) > 63) {
    throw new ConfigError(`${what} must be a name of 1 to 63 bytes without a NUL character, e.g. lender`);
  }
  return schema;
}

export class PgStore {
  readonly target: string;
  readonly schema: string;
  readonly #pool: Pool;
  readonly #settings: PgSettings;
  readonly #onNotice: ((notice: SinkNotice) => void) | undefined;
  readonly #told = new Set<string>();
  readonly #context: StoreContext;
  /** Known once the server asked for it: cut out of every error. */
  #password: string | undefined;
  /** Where that password came from, named if the server refuses it. */
  #passwordFrom: string | undefined;

  private constructor(pool: Pool, settings: PgSettings, schema: string, onNotice: ((notice: SinkNotice) => void) | undefined) {
    this.#pool = pool;
    this.#settings = settings;
    this.schema = schema;
    this.target = describeStore(settings, schema);
    this.#onNotice = onNotice;
    const stages = new WeakMap<PoolClient, Map<string, string>>();
    this.#context = {
      schema,
      target: this.target,
      tables: new Map(),
      created: new Set(),
      error: (error, doing) => this.#error(error, doing),
      stagesOf: (client) => {
        let map = stages.get(client);
        if (map === undefined) stages.set(client, (map = new Map()));
        return map;
      },
    };
  }

  /** Connects (one connection is opened and checked, so a wrong address or password fails here). */
  static async connect(opts: PgStoreOptions = {}): Promise<PgStore> {
    const settings = resolveConnection(opts);
    const schema = checkSchemaName(opts.schema ?? DEFAULT_SCHEMA);
    // Loaded here, not at the top: importing the package must not load node-postgres.
    const { default: pg } = await import('pg');
    let store: PgStore | undefined;
    const pool: Pool = new pg.Pool({
      Client: closingOnFailedConnect(pg.Client),
      host: settings.host,
      port: settings.port,
      user: settings.user,
      database: settings.database,
      ssl: settings.ssl,
      application_name: settings.applicationName ?? opts.applicationName ?? 'lender-streams',
      // The service writes dates dd/MM/yyyy: a date column made by hand reads them so (under the
      // server's usual MDY, 05/03/1980 would be 3 May, and 31/12/1980 refused). ISO input and
      // every output are the same in either.
      options: '-c DateStyle=ISO,DMY',
      max: opts.maxConnections ?? 1,
      // An address that never answers fails in a while instead of at the TCP timeout; keepalive
      // finds a connection that died in between.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      // Asked for only when the server wants a password; always a function, so node-postgres never
      // falls back to reading process.env.PGPASSWORD itself.
      password: async () => {
        const { password, from } = await findPassword(settings);
        if (store !== undefined) {
          store.#password = password;
          store.#passwordFrom = from;
        }
        return password;
      },
    });
    // A connection that dies (server restart, a terminated backend) fails the statement it was
    // running, or is dropped by the pool when idle; node-postgres also raises it as an 'error' event,
    // which must not go unhandled.
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    store = new PgStore(pool, settings, schema, opts.onNotice);
    try {
      const client = await pool.connect();
      client.release();
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw store.#error(error, 'connecting');
    }
    return store;
  }

  /** The dataset's table, schema-qualified as it is typed in SQL: what messages and `location` name, and the key of `tables`. */
  tableName(dataset: Pick<SinkDataset, 'code'>): string {
    return shownName(this.schema, datasetTable(dataset));
  }

  /** Creates what is missing of the schema, the state table and the dataset's table, and learns
   * the table's columns; a table made by hand that cannot take the rows is refused (a SinkError).
   * With `create` false a missing dataset table is left to the first commit (a dataset that turns
   * out unreadable leaves none). Safe to run from several processes at once. */
  async ensureTable(dataset: SinkDataset, create = true): Promise<void> {
    // Known already (made or learnt by this store): no transaction, no round trip.
    if (this.#context.tables.has(this.tableName(dataset))) return;
    await this.transaction((tx) => tx.ensureTable(dataset, create));
  }

  /** The state saved under `key`; undefined when there is none (or no state table yet). */
  async loadState(key: string): Promise<DatasetState | undefined> {
    const sql = `SELECT state FROM ${qualified(this.schema, STATE_TABLE)} WHERE key = $1`;
    try {
      const result = await this.#pool.query<{ state: DatasetState }>(sql, [key]);
      return result.rows[0]?.state;
    } catch (error) {
      if ((error as { code?: unknown }).code === '42P01') return undefined; // undefined_table
      throw this.#error(error, 'reading the state');
    }
  }

  /**
   * Runs `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it
   * throws (its error is rethrown as it is). Notices of what the transaction created are told once
   * it committed. A failed COMMIT leaves the outcome unknown to the caller, as with any database:
   * the transaction is then either wholly there or wholly not.
   */
  async transaction<T>(fn: (tx: PgTransaction) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw this.#error(error, 'connecting');
    }
    const effects: TxEffects = { notices: [], touched: new Set(), created: new Set() };
    const tx = new PgTransaction(this.#context, client, effects);
    let healthy = true;
    try {
      const result = await fn(tx);
      if (!(await tx.commit())) throw new SinkError(`PostgreSQL at ${this.target}: the transaction was rolled back because one of its statements failed`);
      this.#committed(effects);
      return result;
    } catch (error) {
      // What the transaction created or added is gone again: those tables are learnt anew next
      // time, and staging tables made in it are made again.
      for (const table of effects.touched) this.#context.tables.delete(table);
      this.#context.stagesOf(client).clear();
      if (tx.begun) {
        try {
          await client.query('ROLLBACK');
        } catch {
          healthy = false;
        }
      }
      throw error;
    } finally {
      client.release(healthy ? undefined : true);
    }
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }

  #error(error: unknown, doing: string): SinkError | ConfigError {
    const secrets = [this.#password, this.#settings.urlPassword, this.#settings.env.PGPASSWORD];
    return sinkErrorOf(error, this.target, secrets, doing, doing !== 'connecting', this.#passwordFrom);
  }

  #committed(effects: TxEffects): void {
    for (const table of effects.created) this.#context.created.add(table);
    for (const notice of effects.notices) {
      const key = `${notice.dataset}\u0000${notice.message}`;
      if (this.#told.has(key)) continue;
      this.#told.add(key);
      this.#onNotice?.(notice);
    }
  }
}

/**
 * node-postgres's client whose connect, failing, closes its socket. pg-pool drops a client that
 * failed to connect without ending it, and a failure of the client's own before the server is done
 * with it (the password function finding none) leaves the server waiting for the password until
 * its authentication_timeout (a minute by default), holding the process open that long.
 */
function closingOnFailedConnect(Client: typeof import('pg').Client): typeof import('pg').Client {
  type Connected = InstanceType<typeof Client>;
  return class extends Client {
    #tried = false;
    override connect(): Promise<Connected>;
    override connect(callback: (error: Error | null, client?: Connected) => void): void;
    override connect(callback?: (error: Error | null, client?: Connected) => void): Promise<Connected> | void {
      // A second call only fails ("already connected"): the socket is the first call's.
      const first = !this.#tried;
      this.#tried = true;
      const closing = (error: unknown): void => {
        if (first && error) this.connection.stream.destroy();
      };
      if (callback === undefined) {
        return super.connect().catch((error: unknown) => {
          closing(error);
          throw error;
        });
      }
      super.connect((error: Error | null, client?: Connected) => {
        closing(error);
        callback(error, client);
      });
    }
  };
}
