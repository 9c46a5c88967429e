// A sink from a `--to` spec. The database sinks are loaded on demand: their native modules
// (DuckDB, node-postgres) cost start-up time that `lender sync --to ndjson:` and `--help` never pay.
import { ConfigError } from '../core/errors.ts';
import type { StateStore } from '../exports/state.ts';
import { ndjsonSink } from './ndjson-sink.ts';
import type { Sink, SinkNotice } from './sink.ts';
import type { SinkSpec } from './sink-spec.ts';

export interface OpenSinkOptions {
  /** NDJSON only: the state store (default <dir>/.lender-state.json). */
  state?: StateStore;
  /** PostgreSQL only: the schema of the tables (default 'lender'). */
  schema?: string;
  /** PostgreSQL only: how long a worker's lease on a part lasts without renewal (ms). */
  lease?: number;
  /** Where DATABASE_URL and the PG* variables (PostgreSQL) and LENDER_DUCKDB_REOPEN_ROWS (DuckDB)
   * are read. Default process.env. */
  env?: NodeJS.ProcessEnv;
  onNotice?: (notice: SinkNotice) => void;
}

export async function openSink(spec: SinkSpec, opts: OpenSinkOptions = {}): Promise<Sink> {
  const onNotice = opts.onNotice === undefined ? {} : { onNotice: opts.onNotice };
  switch (spec.kind) {
    case 'ndjson':
      return ndjsonSink({ dir: spec.dir, ...(opts.state !== undefined && { state: opts.state }) });
    case 'duckdb': {
      const { duckdbSink } = await import('./duckdb-sink.ts');
      const reopen = reopenAfterRows(opts.env ?? process.env);
      // The CLI's and a session's own process: a heap small enough to collect at each checkpoint.
      return duckdbSink({ path: spec.path, collectGarbage: true, ...onNotice, ...(reopen !== undefined && { reopenAfterRows: reopen }) });
    }
    case 'postgres': {
      const { postgresSink } = await import('./postgres-sink.ts');
      return postgresSink({
        ...(spec.url !== undefined && { connectionString: spec.url }),
        ...(opts.schema !== undefined && { schema: opts.schema }),
        ...(opts.env !== undefined && { env: opts.env }),
        ...(opts.lease !== undefined && { lease: opts.lease }),
        ...onNotice,
      });
    }
  }
}

/** LENDER_DUCKDB_REOPEN_ROWS: the DuckDB sink's `reopenAfterRows`, when set. */
function reopenAfterRows(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.LENDER_DUCKDB_REOPEN_ROWS;
  if (text === undefined || text === '') return undefined;
  const rows = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(rows)) throw new ConfigError(`LENDER_DUCKDB_REOPEN_ROWS must be a whole number of rows (0: never reopen); got ${JSON.stringify(text)}`);
  return rows;
}
