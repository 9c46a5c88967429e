// The connection flags of the client commands, turned into connect() options: flags, else the
// environment, else the credentials file; or --sandbox for an embedded sandbox. The password is
// never a flag value, so it stays out of shell history and `ps` output: it comes from
// LENDER_PASSWORD, the credentials file, or a file named by --password-file.
// The client loads only when a command connects: `lender repl` shows its prompt first.
import { readFile } from 'node:fs/promises';
import type { ClientOptions } from '../client/client.ts';
import type { ConnectionOptions } from '../client/config.ts';
import { ConfigError, MissingCredentialsError } from '../core/errors.ts';
import type { Connection } from '../connect.ts';
import { DEFAULT_SEED } from '../prng.ts';
import { UsageError, type CommandIo } from './command.ts';

/** node:util parseArgs definitions; spread them into a command's own options. */
export const CONNECTION_OPTIONS = {
  'auth-url': { type: 'string' },
  lender: { type: 'string' },
  email: { type: 'string' },
  'password-file': { type: 'string' },
  'ca-file': { type: 'string' },
  sandbox: { type: 'boolean' },
} as const;

export interface ConnectionFlags {
  'auth-url'?: string | undefined;
  lender?: string | undefined;
  email?: string | undefined;
  'password-file'?: string | undefined;
  'ca-file'?: string | undefined;
  sandbox?: boolean | undefined;
}

/** For the --help text of client commands. */
export const CONNECTION_HELP = `Connection (flags, else LENDER_* environment variables, else the credentials file):
  --auth-url URL        service root, https only            (LENDER_AUTH_URL)
  --lender NAME         lender subdomain from onboarding      (LENDER_SUBDOMAIN)
  --email EMAIL         login email                           (LENDER_EMAIL)
  --password-file FILE  file holding the password             (LENDER_PASSWORD)
  --ca-file FILE        extra trusted CA certificate, PEM     (LENDER_CA_FILE)
  --sandbox             start an embedded sandbox (seed ${DEFAULT_SEED}) and use its demo lender
The credentials file is $LENDER_CREDENTIALS_FILE, else
$XDG_CONFIG_HOME/lender-streams/credentials.json (default ~/.config/...), mode 600,
holding {"authUrl","lender","email","password","caFile"?}.`;

/** The connection settings the flags give (the password read from --password-file). */
async function connectionOptions(flags: ConnectionFlags): Promise<ConnectionOptions> {
  const password = flags['password-file'] === undefined ? undefined : await readPasswordFile(flags['password-file']);
  return { authUrl: flags['auth-url'], lender: flags.lender, email: flags.email, password, caFile: flags['ca-file'] };
}

/**
 * Checks the connection settings without connecting: --sandbox alone, credentials complete, the
 * URL https, the files readable. A command that creates something before it connects (sync opens
 * its database first, to hold it) calls this first, so bad settings create nothing.
 */
export async function checkConnectionFlags(flags: ConnectionFlags, io: CommandIo): Promise<void> {
  checkSandboxAlone(flags);
  if (!flags.sandbox) await connectionSettings(flags, io);
}

const SETTINGS = new WeakMap<ConnectionFlags, Promise<ConnectionOptions>>();

/**
 * The settings of the flags, the environment and the credentials file, resolved once per command
 * line: each file they name is read once, so one that can be read only once (a pipe, as bash's
 * `--password-file <(pass show lender)` gives) serves both the check and the connection.
 */
export function connectionSettings(flags: ConnectionFlags, io: CommandIo): Promise<ConnectionOptions> {
  let settings = SETTINGS.get(flags);
  if (settings === undefined) {
    settings = (async () => {
      const { resolveConfig } = await import('../client/config.ts');
      try {
        const config = await resolveConfig(await connectionOptions(flags), io.env);
        return { authUrl: config.authUrl, lender: config.lender, email: config.email, password: config.revealPassword(), ca: config.ca };
      } catch (error) {
        throw await usageErrorOf(error, io);
      }
    })();
    SETTINGS.set(flags, settings);
  }
  return settings;
}

/** connect() as the client commands do it: from the flags, a missing credential a usage error. */
export async function connectWithFlags(flags: ConnectionFlags, io: CommandIo, clientOptions: ClientOptions = {}): Promise<Connection> {
  checkSandboxAlone(flags);
  const where = flags.sandbox ? { sandbox: true } : await connectionSettings(flags, io);
  const { connect } = await import('../connect.ts');
  let connection: Connection;
  try {
    connection = await connect({ ...where, env: io.env, client: clientOptions, signal: io.signal });
  } catch (error) {
    throw await usageErrorOf(error, io);
  }
  if (connection.sandbox !== undefined) {
    io.stderr.write(`lender: using an embedded sandbox at ${connection.sandbox.authUrl} (lender demo, seed ${DEFAULT_SEED})\n`);
  }
  return connection;
}

function checkSandboxAlone(flags: ConnectionFlags): void {
  if (!flags.sandbox) return;
  const given = (['auth-url', 'lender', 'email', 'password-file', 'ca-file'] as const).filter((k) => flags[k] !== undefined);
  if (given.length > 0) throw new UsageError(`--sandbox cannot be combined with ${given.map((k) => `--${k}`).join(', ')}`);
}

/** Missing credentials as a usage error saying where they may come from; other errors as they are. */
async function usageErrorOf(error: unknown, io: CommandIo): Promise<unknown> {
  if (!(error instanceof MissingCredentialsError)) return error;
  const { credentialsFilePath } = await import('../client/config.ts');
  return new UsageError(
    `no credentials: pass --auth-url, --lender, --email and --password-file (or set ${error.missing.join(', ')}, ` +
      `or write ${credentialsFilePath(io.env)}), or use --sandbox for an embedded sandbox`,
  );
}

export async function readPasswordFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`Could not read the password file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  // Editors and `echo` add a final newline that is not part of the password.
  const password = text.replace(/\r?\n$/, '');
  if (password === '') throw new ConfigError(`The password file ${path} is empty.`);
  return password;
}
