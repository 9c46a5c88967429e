// connect(): how the CLI, the session (REPL, notebooks), the demo and tests get a logged-in
// client. With `sandbox` it starts an embedded sandbox and logs in as its `demo` lender;
// otherwise the settings come from the options, else the LENDER_* environment, else the
// credentials file.
import { LenderClient, type ClientOptions } from './client/client.ts';
import { resolveConfig, type ConnectionOptions } from './client/config.ts';
import type { SandboxOptions } from './sandbox/contracts.ts';
import type { Sandbox } from './sandbox/index.ts';
import { DEFAULT_SEED } from './prng.ts';

export interface ConnectOptions extends ConnectionOptions {
  /** Start an embedded sandbox (seed DEFAULT_SEED unless given) and log in as its `demo` lender. */
  sandbox?: boolean | SandboxOptions;
  /** Environment to read LENDER_* from. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Options of the client (timeouts, retry policy). */
  client?: ClientOptions;
  signal?: AbortSignal;
}

/** Who is logged in, where; never the password. */
export interface ConnectionIdentity {
  readonly authUrl: string;
  readonly lender: string;
  readonly email: string;
  readonly sandbox: boolean;
}

export interface Connection {
  readonly client: LenderClient;
  readonly identity: ConnectionIdentity;
  /** Logs in again with the same credentials: a new client. */
  login(signal?: AbortSignal): Promise<LenderClient>;
  /** The passwords this connection knows, to keep out of history and output; never printed. */
  secrets(): string[];
  /** The embedded sandbox, when one was started. */
  readonly sandbox?: Sandbox;
  /** Closes the client, then the embedded sandbox if any. */
  close(): Promise<void>;
}

export function connect(opts: ConnectOptions = {}): Promise<Connection> {
  return opts.sandbox ? connectSandbox(opts) : connectConfigured(opts);
}

async function connectSandbox(opts: ConnectOptions): Promise<Connection> {
  // Loaded only here: a connection to the real service never pays for the sandbox.
  const { startSandbox } = await import('./sandbox/index.ts');
  const sandbox = await startSandbox({ seed: DEFAULT_SEED, ...(typeof opts.sandbox === 'object' ? opts.sandbox : {}) });
  try {
    const creds = sandbox.credentials('demo');
    const login = (signal?: AbortSignal) => LenderClient.login({ ...opts.client, ...creds, signal });
    const client = await login(opts.signal);
    return {
      client,
      identity: { authUrl: creds.authUrl, lender: creds.lender, email: creds.email, sandbox: true },
      login,
      // Every sandbox lender's password: the user may type any of them.
      secrets: () => sandbox.lenders.map((l) => l.password),
      sandbox,
      async close() {
        try {
          await client.close();
        } finally {
          await sandbox.close();
        }
      },
    };
  } catch (error) {
    await sandbox.close().catch(() => undefined);
    throw error;
  }
}

async function connectConfigured(opts: ConnectOptions): Promise<Connection> {
  const config = await resolveConfig(opts, opts.env ?? process.env);
  const login = (signal?: AbortSignal) =>
    LenderClient.login({
      ...opts.client, authUrl: config.authUrl, lender: config.lender, email: config.email,
      password: config.revealPassword(), ca: config.ca, signal,
    });
  const client = await login(opts.signal);
  return {
    client,
    identity: { authUrl: config.authUrl, lender: config.lender, email: config.email, sandbox: false },
    login,
    secrets: () => [config.revealPassword()],
    close: () => client.close(),
  };
}
