// Where the PostgreSQL sink connects, resolved from its options and the environment it is given
// (never node-postgres's own reading of process.env): a postgres:// URL, else DATABASE_URL, else
// the PG* variables, each part falling back to its PG* variable and then to libpq's default.
// The password comes from PGPASSWORD or the password file, or from DATABASE_URL (an environment
// variable, like PGPASSWORD); never from a URL given as an option or on a command line, which would
// leave it in shell history and the process list. The password is kept out of every text here.
import { userInfo } from 'node:os';
import type { ConnectionOptions } from 'node:tls';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../core/errors.ts';
import { redactText } from '../../core/redact.ts';
import { SinkError } from '../errors.ts';
import { pgpassPath, readPgpass } from './pgpass.ts';

export interface PgConnectionOptions {
  /** postgres://user@host:port/db, without a password. Default DATABASE_URL, else the PG* variables. */
  connectionString?: string;
  /** Where DATABASE_URL and the PG* variables are read. Default process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface PgSettings {
  host: string;
  port: number;
  user: string;
  database: string;
  /** false: plain TCP (libpq's default `prefer` falls back to it too). */
  ssl: false | ConnectionOptions;
  /** The password of DATABASE_URL, when it holds one. */
  urlPassword: string | undefined;
  /** The URL's application_name, else PGAPPNAME; undefined: the caller's default. */
  applicationName: string | undefined;
  env: NodeJS.ProcessEnv;
}

// Query parameters of a URL that are understood; any other is refused rather than ignored.
const URL_PARAMS = new Set(['host', 'port', 'user', 'dbname', 'sslmode', 'sslrootcert', 'application_name']);

/** postgres:// or postgresql:// (libpq's two prefixes), in any case. */
function isPostgresUrl(text: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(text);
}

/**
 * The URL, or a ConfigError that does not echo it (it may hold a password). Refused besides what
 * URL refuses: a text without the // (URL reads the rest as a path, where a password would pass
 * unseen into the database's name and every message naming it), an '@' after the host (a password
 * holding '/', '?' or '#' ends the host early, and its rest lands in the port, the path, the query
 * or the fragment), a fragment, which means nothing to PostgreSQL, and a parameter this sink does
 * not read (a setting that would otherwise be ignored).
 */
export function parsePostgresUrl(text: string, what: string): URL {
  let url: URL;
  try {
    if (!isPostgresUrl(text)) throw new Error('scheme');
    url = new URL(text);
  } catch {
    throw new ConfigError(`${what} is not a PostgreSQL URL; the form is postgres://user@host:5432/database`);
  }
  const afterScheme = text.slice(text.indexOf('//') + 2);
  const hostEnd = afterScheme.search(/[/?#]/);
  if (hostEnd >= 0 && afterScheme.slice(hostEnd).includes('@')) {
    throw new ConfigError(`${what} has an '@' after its host: a password holding '/', '?' or '#' ends the host there; ` +
      'put the password in PGPASSWORD or ~/.pgpass instead (or percent-encode those characters)');
  }
  if (url.hash !== '' || text.includes('#')) throw new ConfigError(`${what} has a '#' part, which a PostgreSQL URL does not take`);
  for (const name of url.searchParams.keys()) {
    if (!URL_PARAMS.has(name)) throw new ConfigError(`the PostgreSQL URL parameter '${name}' is not supported (supported: ${[...URL_PARAMS].join(', ')})`);
  }
  return url;
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The connection settings, without touching the network. Throws ConfigError on a bad URL. */
export function resolveConnection(opts: PgConnectionOptions): PgSettings {
  const env = opts.env ?? process.env;
  let url: URL | undefined;
  let urlPassword: string | undefined;
  if (opts.connectionString !== undefined) {
    url = parsePostgresUrl(opts.connectionString, 'the connection string');
    if (url.password !== '') {
      throw new ConfigError('a password in the connection string would be left in code, shell history or the process list; put it in PGPASSWORD or ~/.pgpass instead');
    }
  } else if (env.DATABASE_URL !== undefined && env.DATABASE_URL !== '') {
    url = parsePostgresUrl(env.DATABASE_URL, 'DATABASE_URL');
    if (url.password !== '') urlPassword = decoded(url.password);
  }
  const params = url?.searchParams ?? new URLSearchParams();
  const pick = (...values: (string | undefined)[]): string | undefined => values.find((v) => v !== undefined && v !== '');
  const host = pick(params.get('host') ?? undefined, url === undefined ? undefined : decoded(url.hostname).replace(/^\[(.*)\]$/, '$1'), env.PGHOST) ?? 'localhost';
  const portText = pick(params.get('port') ?? undefined, url?.port, env.PGPORT) ?? '5432';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigError(`not a PostgreSQL port: ${portText}`);
  const user = pick(params.get('user') ?? undefined, url === undefined ? undefined : decoded(url.username), env.PGUSER) ?? osUser(env);
  const path = url === undefined ? undefined : decoded(url.pathname.replace(/^\//, ''));
  const database = pick(params.get('dbname') ?? undefined, path, env.PGDATABASE) ?? user;
  const sslmode = pick(params.get('sslmode') ?? undefined, env.PGSSLMODE) ?? 'prefer';
  const rootCert = pick(params.get('sslrootcert') ?? undefined, env.PGSSLROOTCERT);
  const applicationName = pick(params.get('application_name') ?? undefined, env.PGAPPNAME);
  return { host, port, user, database, ssl: sslOptions(sslmode, rootCert), urlPassword, applicationName, env };
}

/** libpq's default user: the operating system's. */
function osUser(env: NodeJS.ProcessEnv): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? env.LOGNAME ?? 'postgres';
  }
}

function sslOptions(mode: string, rootCert: string | undefined): false | ConnectionOptions {
  const ca = (): ConnectionOptions => {
    if (rootCert === undefined) return {};
    try {
      return { ca: readFileSync(rootCert, 'utf8') };
    } catch (error) {
      throw new ConfigError(`cannot read the root certificate sslrootcert=${rootCert}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
  };
  switch (mode) {
    case 'disable':
    case 'allow':
    case 'prefer':
      return false;
    case 'require':
    case 'verify-ca':
    case 'verify-full':
      // Stricter than libpq, whose require checks no certificate and verify-ca no host name: this
      // project never talks TLS without checking both, whatever the URL or the environment says.
      return { ...ca(), rejectUnauthorized: true };
    default:
      throw new ConfigError(`sslmode must be disable, allow, prefer, require, verify-ca or verify-full, not '${mode}'`);
  }
}

/** postgres://user@host:port/database: what the messages name, never with a password. */
export function describeConnection(s: Pick<PgSettings, 'host' | 'port' | 'user' | 'database'>): string {
  const host = s.host.includes(':') && !s.host.startsWith('/') ? `[${s.host}]` : s.host;
  return `postgres://${encodeURIComponent(s.user)}@${host}:${s.port}/${encodeURIComponent(s.database)}`;
}

/**
 * The password for the connection, asked for by node-postgres only when the server wants one:
 * DATABASE_URL's, else PGPASSWORD, else the password file; `from` names which, for a refusal's
 * message. None: an error saying where to put it.
 */
export async function findPassword(s: PgSettings): Promise<{ password: string; from: string }> {
  if (s.urlPassword !== undefined) return { password: s.urlPassword, from: 'DATABASE_URL' };
  if (s.env.PGPASSWORD !== undefined && s.env.PGPASSWORD !== '') return { password: s.env.PGPASSWORD, from: 'PGPASSWORD' };
  const file = await readPgpass(s.env, s);
  if (file.password !== undefined) return { password: file.password, from: pgpassPath(s.env) };
  const ignored = 'ignored' in file && file.ignored !== undefined ? ` (${file.ignored})` : '';
  // A credential the user has not given, as a missing lender password is: a ConfigError (exit 2).
  throw new ConfigError(`PostgreSQL at ${describeConnection(s)} asks for a password and none was found: set PGPASSWORD or add a line to ~/.pgpass${ignored}`);
}

/** Known secrets to cut out of any text: the password, once it is known. */
export function scrub(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s !== undefined && s.length >= 4) out = out.split(s).join('[redacted]');
  return redactText(out, secrets);
}

/** Error codes of node's sockets that say the server is not there (or, once connected, that the
 * connection was lost). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE']);

/** Whether the server's DETAIL (and CONTEXT) of an error may hold the values of a row: data
 * exceptions (22) and integrity violations (23: "Failing row contains (...)", "Key (...)=(...)"). */
function mayHoldRowData(code: string | undefined): boolean {
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * The message of a data exception (22) without the value it may quote (`invalid input syntax for
 * type date: "Jane Doe 1970"`: personal data, in a column made by hand): cut at its first quote,
 * whatever the server's language quotes with (", », «, „). A character the database's encoding
 * cannot store is told by its bytes: left out too. The column COPY's context names is added.
 */
function withoutValues(message: string, code: string | undefined, where: unknown): string {
  if (code === undefined || !code.startsWith('22')) return message;
  const column = typeof where === 'string' ? /, column ([^:]+):/.exec(where)?.[1] : undefined;
  const quote = message.search(/["»«„“]/);
  const encoding = code === '22021' || code === '22P05';
  const said = encoding ? "a value holds a character that the database's encoding cannot store" : quote < 0 ? message : `${message.slice(0, quote).trimEnd()} …`;
  const cut = !encoding && said !== message;
  const notes = [...(column === undefined ? [] : [`column ${column}`]), ...(cut ? ['the rest is left out: it may quote the value'] : [])];
  return notes.length === 0 ? said : `${said} (${notes.join('; ')})`;
}

/**
 * Any failure of node-postgres as a SinkError naming the database (no password) and what happened,
 * with the password cut out of the message, the server's detail and the cause; a detail that may
 * hold a row's values is left out. `connected`: whether the connection had been made (a socket
 * error then means it was lost, not that the server cannot be reached); `passwordFrom`: where the
 * password sent came from (findPassword), named when the server refuses it. Errors of ours (a
 * SinkError, findPassword's ConfigError) come back as they are.
 */
export function sinkErrorOf(error: unknown, target: string, secrets: readonly (string | undefined)[], doing: string,
  connected = doing !== 'connecting', passwordFrom?: string): SinkError | ConfigError {
  if (error instanceof SinkError || error instanceof ConfigError) return error;
  const e = error as { message?: unknown; code?: unknown; detail?: unknown; hint?: unknown; where?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  let what = withoutValues(scrub(typeof e.message === 'string' ? e.message : String(error), secrets), code, e.where);
  // 28000 is also a pg_hba.conf refusal, where no password was asked for: nothing to check then.
  if ((code === '28P01' || code === '28000') && passwordFrom !== undefined) what = `${what} (check the password, taken from ${passwordFrom})`;
  else if (code !== undefined && UNREACHABLE.has(code)) {
    what = connected ? `the connection to the server was lost (${code}); run again once the server is back` : `cannot reach the server (${code}); is it running and listening there?`;
  }
  const rowData = mayHoldRowData(code);
  if (typeof e.detail === 'string' && e.detail !== '' && !rowData) what += `; ${scrub(e.detail, secrets)}`;
  const cause = error instanceof Error ? scrubError(error, secrets, rowData ? code : undefined) : undefined;
  return new SinkError(`PostgreSQL at ${target}: ${doing} failed: ${what}`, cause === undefined ? {} : { cause });
}

/** A copy of an error with the secrets cut from its message, stack and text fields; `rowDataCode`:
 * the code of an error that may quote a row's values, which are left out too. */
function scrubError(error: Error, secrets: readonly (string | undefined)[], rowDataCode: string | undefined): Error {
  const rowData = rowDataCode !== undefined;
  const message = withoutValues(scrub(error.message, secrets), rowDataCode, (error as { where?: unknown }).where);
  const copy = new Error(message);
  copy.name = error.name;
  copy.stack = rowData ? `${error.name}: ${message}` : scrub(error.stack ?? `${error.name}: ${error.message}`, secrets);
  const keys = ['code', 'detail', 'hint', 'severity', 'table', 'column', 'constraint', 'where'] as const;
  for (const key of rowData ? keys.filter((k) => k !== 'detail' && k !== 'where') : keys) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (typeof value === 'string') (copy as unknown as Record<string, unknown>)[key] = scrub(value, secrets);
  }
  return copy;
}
