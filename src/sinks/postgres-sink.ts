// PostgreSQL as a sink: one table per dataset in a schema (default `lender`), rows upserted by
// identity, the state in `<schema>._lender_state`. A commit is one transaction: the page's rows
// are COPYed into a temporary table and merged into the dataset's table (a newer stored version is
// never overwritten by an older one), and the state row is written beside them.
// There is no lock: several processes may load one database at once, and sync() shares the work
// out through the lease tables beside the data (postgres/lease-board.ts).
// node-postgres is loaded when the sink first connects, not when this module is imported.
import type { DatasetState } from '../exports/state.ts';
import type { Sink, SinkDataset, SinkNotice, SinkPage } from './sink.ts';
import { resolveConnection } from './postgres/connection.ts';
import { checkSchemaName, datasetTable, DEFAULT_SCHEMA, describeStore, PgStore } from './postgres/store.ts';
import { DEFAULT_LEASE_MS, parseLease, PgLeaseBoard } from './postgres/lease-board.ts';
import { shownName } from './postgres/sql.ts';
import type { LeaseBoard } from './shared-load.ts';
import type { DurationValue } from '../core/options.ts';
import { checkOptionNames } from '../core/option-names.ts';

export interface PostgresSinkOptions {
  /** postgres://user@host:port/db; default DATABASE_URL, else the PG* variables. Never holds a password. */
  connectionString?: string;
  /** Schema of the tables (created when missing). Default 'lender'. */
  schema?: string;
  /** Where DATABASE_URL, PGPASSWORD and the other PG* variables are read. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** New tables and columns, values that did not fit their column: each told once per run. */
  onNotice?: (notice: SinkNotice) => void;
  /** How long a worker's claim on a part of a load lasts without renewal (renewed while it works);
   * a part of a worker that stopped is taken over after it. Default 30 s; from 100 ms to 24 h. */
  lease?: DurationValue;
}

/**
 * A PostgreSQL sink. The password comes from PGPASSWORD or ~/.pgpass (or DATABASE_URL); a
 * connection string holding one is refused (a ConfigError, here, before any connection).
 *
 * @example
 * ```ts
 * await sync(client, ['D07'], { to: postgresSink({ connectionString: 'postgres://etl@db:5432/warehouse' }) });
 * ```
 */
export function postgresSink(opts: PostgresSinkOptions = {}): Sink {
  checkOptionNames(opts, { connectionString: true, schema: true, env: true, onNotice: true, lease: true }, 'postgresSink()');
  return new PostgresSink(opts);
}

class PostgresSink implements Sink {
  readonly target: string;
  readonly #opts: PostgresSinkOptions;
  readonly #schema: string;
  readonly #leaseMs: number;
  #store: Promise<PgStore> | undefined;
  #board: PgLeaseBoard | undefined;

  constructor(opts: PostgresSinkOptions) {
    // Resolved now so a bad URL or schema fails before anything runs, and `target` is known.
    const settings = resolveConnection(opts);
    this.#schema = checkSchemaName(opts.schema ?? DEFAULT_SCHEMA);
    this.target = describeStore(settings, this.#schema);
    this.#leaseMs = parseLease(opts.lease ?? DEFAULT_LEASE_MS, 'lease');
    this.#opts = opts;
  }

  /** sync() loads through the lease board: several processes may share one database's loads. */
  async leases(): Promise<LeaseBoard> {
    this.#board ??= new PgLeaseBoard(await this.#connected(), this.#leaseMs);
    return this.#board;
  }

  location(dataset: SinkDataset): string {
    return shownName(this.#schema, datasetTable(dataset));
  }

  async open(dataset: SinkDataset): Promise<DatasetState | undefined> {
    const store = await this.#connected();
    await store.ensureTable(dataset);
    // Nothing to undo: a commit is one transaction, so no rows exist beyond the committed state.
    return store.loadState(dataset.key);
  }

  async commit({ dataset, rows, state }: SinkPage): Promise<void> {
    const store = await this.#connected();
    await store.transaction(async (tx) => {
      await tx.mergeRows(dataset, rows);
      await tx.saveState(dataset.key, state);
    });
  }

  async close(): Promise<void> {
    const store = this.#store;
    this.#store = undefined;
    this.#board = undefined;
    if (store !== undefined) await (await store.catch(() => undefined))?.close();
  }

  #connected(): Promise<PgStore> {
    if (this.#store === undefined) {
      const { connectionString, env, onNotice } = this.#opts;
      this.#store = PgStore.connect({
        ...(connectionString !== undefined && { connectionString }),
        ...(env !== undefined && { env }),
        ...(onNotice !== undefined && { onNotice }),
        schema: this.#schema,
        // A second connection renews a worker's lease while a page is being committed.
        maxConnections: 2,
      });
      // A failed connection is tried again at the next open.
      this.#store.catch(() => (this.#store = undefined));
    }
    return this.#store;
  }
}
