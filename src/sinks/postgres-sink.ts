// PLACEHOLDER: being written in this session (PostgreSQL sink).
import type { Sink, SinkNotice } from './sink.ts';

export interface PostgresSinkOptions {
  /** postgres://user@host:port/db; default DATABASE_URL, else the PG* variables. Never holds a password. */
  connectionString?: string;
  /** Schema of the tables (created when missing). Default 'lender'. */
  schema?: string;
  env?: NodeJS.ProcessEnv;
  onNotice?: (notice: SinkNotice) => void;
}

export function postgresSink(_opts: PostgresSinkOptions): Sink {
  throw new Error('not built yet');
}
