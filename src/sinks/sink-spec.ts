// `--to` of the CLI: which sink, and where. `ndjson:DIR`, `duckdb:FILE` (the default,
// ./lender.duckdb), `postgres://…` / `postgresql://…`, or `postgres:` alone for a database named
// by DATABASE_URL or the PG* variables. A password is never taken from the spec: it would be in
// the shell's history and the process list.
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.ts';
import { parsePostgresUrl } from './postgres/connection.ts';

export const DEFAULT_DUCKDB_FILE = 'lender.duckdb';

export type SinkSpec =
  | { kind: 'ndjson'; dir: string }
  | { kind: 'duckdb'; path: string }
  /** url undefined: DATABASE_URL or the PG* variables. */
  | { kind: 'postgres'; url: string | undefined };

export function parseSinkSpec(spec: string): SinkSpec {
  const colon = spec.indexOf(':');
  const scheme = colon < 0 ? '' : spec.slice(0, colon).toLowerCase();
  const rest = colon < 0 ? '' : spec.slice(colon + 1);
  switch (scheme) {
    case 'ndjson':
      if (rest === '') throw new ConfigError('--to ndjson: needs a folder, e.g. ndjson:out/');
      return { kind: 'ndjson', dir: resolve(rest) };
    case 'duckdb':
      // An empty name is a slip (a variable not set), not a wish for the default file.
      if (rest === '') throw new ConfigError(`--to duckdb: needs a file, e.g. duckdb:${DEFAULT_DUCKDB_FILE}`);
      return { kind: 'duckdb', path: resolve(rest) };
    case 'postgres':
    case 'postgresql': {
      if (rest === '') return { kind: 'postgres', url: undefined };
      const url = parsePostgresUrl(spec, '--to');
      if (url.password !== '') {
        throw new ConfigError('--to: a password in the URL would be left in shell history and the process list; put it in PGPASSWORD or ~/.pgpass instead');
      }
      return { kind: 'postgres', url: spec };
    }
    default:
      // Only the scheme is echoed: the rest of an unknown URL may hold a password.
      throw new ConfigError(`--to must be duckdb:FILE, ndjson:DIR or postgres://…, not ${colon < 0 ? 'a bare name' : `'${scheme}:…'`}`);
  }
}
