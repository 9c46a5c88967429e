// openSession(): the preloaded context shared by the REPL and notebooks. It resolves credentials
// like the CLI (options, else LENDER_* environment, else the credentials file) or, with
// `sandbox`, starts an embedded sandbox and logs in as its `demo` lender.
//
//   const s = await openSession({ sandbox: true });
//   await s.rows('D07', { limit: 5 });   // prints as a table
//   await s.count('D23');                // via dataset: counted per month and summed
//   await s.close();
import type { ConnectionOptions } from './client/config.ts';
import { resolveConfig } from './client/config.ts';
import { LenderClient, type ClientOptions } from './client/client.ts';
import type { SandboxOptions } from './sandbox/contracts.ts';
import { LenderSession, type SandboxHandle, type SessionParts } from './session/context.ts';
import { CatalogView } from './session/results.ts';

export { LenderSession, SyncResult, DEFAULT_ROWS } from './session/context.ts';
export type { Identity, RowsOptions, PagesOptions, SandboxHandle, SessionSyncOptions } from './session/context.ts';
export type { CountOptions } from './session/count.ts';
export type { RecordSource } from './session/writes.ts';
export { CatalogView, Count, PageSummary, RowList, WriteResult } from './session/results.ts';
export { TextTable, barChart, formatTable } from './session/table.ts';
export { findLeaks, looksSensitive } from './session/secrets.ts';
export { fileState, memoryState } from './exports/state.ts';

export interface SessionOptions extends ConnectionOptions {
  /** Start an embedded sandbox (options: seed, scale, latency…) and log in as `demo`. */
  sandbox?: boolean | SandboxOptions;
  /** Environment to read LENDER_* from. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Options of the client (timeouts, retry policy). */
  client?: ClientOptions;
  signal?: AbortSignal;
}

/** Seed and scale of the embedded sandbox when none are given: small enough to start fast. */
export const SESSION_SANDBOX_DEFAULTS: SandboxOptions = { seed: 42, scale: 1000 };

export async function openSession(opts: SessionOptions = {}): Promise<LenderSession> {
  const parts = opts.sandbox ? await sandboxParts(opts) : await configuredParts(opts);
  try {
    parts.catalog = new CatalogView(await parts.client.catalog({ signal: opts.signal }));
  } catch (error) {
    await parts.client.close().catch(() => undefined);
    await parts.dispose?.().catch(() => undefined);
    throw error;
  }
  return new LenderSession(parts);
}

async function sandboxParts(opts: SessionOptions): Promise<SessionParts> {
  // Loaded only here: a session against the real service never pays for the sandbox.
  const { startSandbox } = await import('./sandbox/index.ts');
  const sandboxOptions = typeof opts.sandbox === 'object' ? opts.sandbox : {};
  const sandbox = await startSandbox({ ...SESSION_SANDBOX_DEFAULTS, ...sandboxOptions });
  try {
    const creds = sandbox.credentials('demo');
    const login = (signal?: AbortSignal) =>
      LenderClient.login({ ...opts.client, authUrl: creds.authUrl, lender: creds.lender, email: creds.email, password: creds.password, ca: creds.ca, signal });
    const client = await login(opts.signal);
    const handle: SandboxHandle = {
      authUrl: sandbox.authUrl,
      caFile: sandbox.caFile,
      stats: () => ({ ...sandbox.stats() }),
      drain: () => sandbox.drain(),
      advance: () => sandbox.advance(),
      setFaults: (patch) => sandbox.setFaults(patch),
    };
    return {
      client,
      catalog: undefined as unknown as CatalogView,
      identity: { authUrl: creds.authUrl, lender: creds.lender, email: creds.email, sandbox: true },
      login,
      // Every sandbox lender's password: the user may type any of them.
      secrets: () => sandbox.lenders.map((l) => l.password),
      sandbox: handle,
      dispose: () => sandbox.close(),
    };
  } catch (error) {
    await sandbox.close().catch(() => undefined);
    throw error;
  }
}

async function configuredParts(opts: SessionOptions): Promise<SessionParts> {
  const config = await resolveConfig(opts, opts.env ?? process.env);
  const login = (signal?: AbortSignal) =>
    LenderClient.login({
      ...opts.client, authUrl: config.authUrl, lender: config.lender, email: config.email,
      password: config.revealPassword(), ca: config.ca, signal,
    });
  const client = await login(opts.signal);
  return {
    client,
    catalog: undefined as unknown as CatalogView,
    identity: { authUrl: config.authUrl, lender: config.lender, email: config.email, sandbox: false },
    login,
    secrets: () => [config.revealPassword()],
  };
}
