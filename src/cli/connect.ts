// How every client command gets a logged-in LenderClient: connection flags, else the
// environment, else the credentials file; or --sandbox for an embedded sandbox. The password is
// never a flag value, so it stays out of shell history and `ps` output: it comes from
// LENDER_PASSWORD, the credentials file, or a file named by --password-file.
import { readFile } from 'node:fs/promises';
import { LenderClient, type ClientOptions } from '../client/client.ts';
import { credentialsFilePath, resolveConfig } from '../client/config.ts';
import { ConfigError, MissingCredentialsError } from '../client/errors.ts';
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
  --sandbox             start an embedded sandbox (seed 42) and use its demo lender
The credentials file is $LENDER_CREDENTIALS_FILE, else
$XDG_CONFIG_HOME/lender-streams/credentials.json (default ~/.config/...), mode 600,
holding {"authUrl","lender","email","password","caFile"?}.`;

export interface Connection {
  client: LenderClient;
  /** Present with --sandbox. */
  sandbox?: { close(): Promise<void> };
  /** Closes the client, then the embedded sandbox if any. */
  close(): Promise<void>;
}

export const EMBEDDED_SANDBOX_SEED = 42;

export async function connect(flags: ConnectionFlags, io: CommandIo, clientOptions: ClientOptions = {}): Promise<Connection> {
  if (flags.sandbox) {
    const given = (['auth-url', 'lender', 'email', 'password-file', 'ca-file'] as const).filter((k) => flags[k] !== undefined);
    if (given.length > 0) throw new UsageError(`--sandbox cannot be combined with ${given.map((k) => `--${k}`).join(', ')}`);
    return connectSandbox(io, clientOptions);
  }
  let password: string | undefined;
  if (flags['password-file'] !== undefined) password = await readPasswordFile(flags['password-file']);
  let config;
  try {
    config = await resolveConfig(
      { authUrl: flags['auth-url'], lender: flags.lender, email: flags.email, password, caFile: flags['ca-file'] },
      io.env,
    );
  } catch (error) {
    if (error instanceof MissingCredentialsError) {
      throw new UsageError(
        `no credentials: pass --auth-url, --lender, --email and --password-file (or set ${error.missing.join(', ')}, ` +
          `or write ${credentialsFilePath(io.env)}), or use --sandbox for an embedded sandbox`,
      );
    }
    throw error;
  }
  const client = await LenderClient.login({
    ...clientOptions,
    authUrl: config.authUrl,
    lender: config.lender,
    email: config.email,
    password: config.revealPassword(),
    ca: config.ca,
    signal: io.signal,
  });
  return { client, close: () => client.close() };
}

async function connectSandbox(io: CommandIo, clientOptions: ClientOptions): Promise<Connection> {
  // Loaded only here: the client side never depends on the sandbox, and commands without
  // --sandbox do not pay for loading it.
  const { startSandbox } = await import('../sandbox/index.ts');
  const sandbox = await startSandbox({ seed: EMBEDDED_SANDBOX_SEED });
  try {
    const client = await LenderClient.login({ ...clientOptions, ...sandbox.credentials('demo'), signal: io.signal });
    io.stderr.write(`lender: using an embedded sandbox at ${sandbox.authUrl} (lender demo, seed ${EMBEDDED_SANDBOX_SEED})\n`);
    return {
      client,
      sandbox,
      async close() {
        await client.close();
        await sandbox.close();
      },
    };
  } catch (error) {
    await sandbox.close();
    throw error;
  }
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
