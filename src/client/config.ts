// Where the client's connection settings come from: explicit options, else the environment
// (LENDER_* variables), else a credentials file in the user's config directory. Resolution
// is field by field, so a flag can override one value from the environment or the file.
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { inspect, type InspectOptionsStylized } from 'node:util';
import { ConfigError, MissingCredentialsError } from '../core/errors.ts';
import { assertHttps } from '../core/transport.ts';

/** Where to connect and as whom, for `LenderClient.fromConfig`; any value left out comes from the `LENDER_*` environment, else the credentials file. */
export interface ConnectionOptions {
  /** The service root, `{auth_url}`. Must be https:. */
  authUrl?: string;
  /** The `{lender}` path segment (subdomain) issued at onboarding. */
  lender?: string;
  email?: string;
  password?: string;
  /** Extra trusted CA certificate(s), PEM. Takes precedence over caFile. */
  ca?: string | Buffer;
  /** Path of a PEM file with extra trusted CA certificate(s). */
  caFile?: string;
  /** Path of the credentials file. Default `$LENDER_CREDENTIALS_FILE`, else
   * `$XDG_CONFIG_HOME/lender-streams/credentials.json` (`~/.config/…` without it). */
  credentialsFile?: string;
}

/** Resolved settings. The password sits in a private field so that logging or serialising a
 * config (console.log, JSON.stringify, util.inspect) never shows it. */
export class ResolvedConfig {
  readonly authUrl: string;
  readonly baseUrl: string;
  readonly lender: string;
  readonly email: string;
  readonly ca: string | Buffer | undefined;
  readonly #password: string;

  constructor(values: { authUrl: string; lender: string; email: string; password: string; ca?: string | Buffer | undefined }) {
    this.authUrl = normalizeAuthUrl(values.authUrl);
    this.baseUrl = baseUrlOf(this.authUrl);
    this.lender = values.lender;
    this.email = values.email;
    this.ca = values.ca;
    this.#password = values.password;
  }

  /** The password, for the login request only. */
  revealPassword(): string {
    return this.#password;
  }

  toJSON(): object {
    return { authUrl: this.authUrl, lender: this.lender, email: this.email, password: '[redacted]' };
  }

  [inspect.custom](_depth: number, options: InspectOptionsStylized, inspectFn: typeof inspect): string {
    return `ResolvedConfig ${inspectFn(this.toJSON(), options)}`;
  }
}

export const ENV = {
  authUrl: 'LENDER_AUTH_URL',
  lender: 'LENDER_SUBDOMAIN',
  email: 'LENDER_EMAIL',
  password: 'LENDER_PASSWORD',
  caFile: 'LENDER_CA_FILE',
  credentialsFile: 'LENDER_CREDENTIALS_FILE',
} as const;

/** `$LENDER_CREDENTIALS_FILE`, else `$XDG_CONFIG_HOME/lender-streams/credentials.json`,
 * else `~/.config/lender-streams/credentials.json`. */
export function credentialsFilePath(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env[ENV.credentialsFile];
  if (explicit) return resolve(explicit);
  const configHome = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(configHome, 'lender-streams', 'credentials.json');
}

/** Parses and checks a service root: https only, no credentials in it, no trailing slash. */
export function normalizeAuthUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`The auth URL '${safeUrlText(value)}' is not a valid URL; use the form https://host[:port].`);
  }
  assertHttps(url);
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError('The auth URL must not contain a user name or password; pass credentials through the options, environment or credentials file.');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new ConfigError(`The auth URL https://${url.host}${url.pathname} must not carry a query string or fragment.`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/** `{base_url}`: the root of the account and export endpoints. */
export function baseUrlOf(authUrl: string): string {
  return `${normalizeAuthUrl(authUrl)}/admin/v3`;
}

interface FileCredentials {
  authUrl?: string;
  lender?: string;
  email?: string;
  password?: string;
  caFile?: string;
}

/** Reads the credentials file; undefined when it does not exist. */
async function readCredentialsFile(path: string): Promise<FileCredentials | undefined> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`Could not read the credentials file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  // POSIX permission bits mean nothing on Windows, where ACLs protect the profile directory.
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new ConfigError(
      `The credentials file ${path} is readable or writable by other users (mode ${(mode & 0o777).toString(8).padStart(4, '0')}); ` +
        `restrict it with: chmod 600 ${path}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    // The parser's message quotes the file's text, which holds a password: never pass it on.
    throw new ConfigError(`The credentials file ${path} is not valid JSON; it should hold {"authUrl", "lender", "email", "password", "caFile"?}.`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`The credentials file ${path} should hold a JSON object {"authUrl", "lender", "email", "password", "caFile"?}.`);
  }
  const record = parsed as Record<string, unknown>;
  const out: FileCredentials = {};
  for (const key of ['authUrl', 'lender', 'email', 'password', 'caFile'] as const) {
    const value = record[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new ConfigError(`The credentials file ${path} has a non-string "${key}".`);
    out[key] = key === 'caFile' ? resolve(dirname(path), value) : value;
  }
  return out;
}

async function readCaFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`Could not read the CA file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check LENDER_CA_FILE or --ca-file.`);
  }
  // Without a certificate in it, TLS would only say that the server's is not trusted: a mistake
  // in the setting, told as one.
  if (!/-----BEGIN (?:TRUSTED |X509 )?CERTIFICATE-----/.test(text)) {
    throw new ConfigError(`The CA file ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----); check LENDER_CA_FILE or --ca-file.`);
  }
  return text;
}

/**
 * Resolves the connection settings. The credentials file is read only when the options and the
 * environment leave something out, so a complete environment never touches it.
 */
export async function resolveConfig(options: ConnectionOptions = {}, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedConfig> {
  const pick = (key: 'authUrl' | 'lender' | 'email' | 'password' | 'caFile'): string | undefined => {
    const fromOption = options[key];
    if (fromOption !== undefined && fromOption !== '') return fromOption;
    const fromEnv = env[ENV[key]];
    return fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
  };
  const merged = {
    authUrl: pick('authUrl'),
    lender: pick('lender'),
    email: pick('email'),
    password: pick('password'),
    caFile: pick('caFile'),
  };
  // An http:// URL given directly is refused before the file system is touched.
  if (merged.authUrl !== undefined) normalizeAuthUrl(merged.authUrl);

  let filePath: string | undefined;
  if (merged.authUrl === undefined || merged.lender === undefined || merged.email === undefined || merged.password === undefined) {
    filePath = options.credentialsFile ?? credentialsFilePath(env);
    const file = await readCredentialsFile(filePath);
    if (file !== undefined) {
      merged.authUrl ??= file.authUrl;
      merged.lender ??= file.lender;
      merged.email ??= file.email;
      merged.password ??= file.password;
      merged.caFile ??= file.caFile;
    }
  }

  const missing: string[] = [];
  if (merged.authUrl === undefined) missing.push(ENV.authUrl);
  if (merged.lender === undefined) missing.push(ENV.lender);
  if (merged.email === undefined) missing.push(ENV.email);
  if (merged.password === undefined) missing.push(ENV.password);
  if (missing.length > 0) {
    throw new MissingCredentialsError(
      `No complete credentials found (missing ${missing.join(', ')}): set LENDER_AUTH_URL, LENDER_SUBDOMAIN, LENDER_EMAIL and LENDER_PASSWORD, ` +
        `or write them to ${filePath ?? credentialsFilePath(env)}, or use --sandbox for an embedded sandbox.`,
      missing,
    );
  }
  const ca = options.ca ?? (merged.caFile !== undefined ? await readCaFile(merged.caFile) : undefined);
  return new ResolvedConfig({
    authUrl: merged.authUrl!,
    lender: merged.lender!,
    email: merged.email!,
    password: merged.password!,
    ca,
  });
}

/** A URL for an error message, with any userinfo dropped. */
function safeUrlText(value: string): string {
  return value.replace(/\/\/[^/@]*@/, '//').slice(0, 200);
}
