// openSession(): the preloaded context shared by the REPL and notebooks. It resolves credentials
// like the CLI (options, else LENDER_* environment, else the credentials file) or, with
// `sandbox`, starts an embedded sandbox and logs in as its `demo` lender.
//
//   const s = await openSession({ sandbox: true });
//   await s.rows('D07', { limit: 5 });   // prints as a table
//   await s.count('D23');                // via dataset: counted per month and summed
//   await s.close();
import { connect, type ConnectOptions } from './connect.ts';
import type { SandboxOptions } from './sandbox/contracts.ts';
import { DEFAULT_OPTIONS, DEFAULT_SEED } from './sandbox/options.ts';
import { LenderSession } from './session/context.ts';
import { CatalogView } from './session/results.ts';

export { LenderSession, SyncResult, DEFAULT_ROWS } from './session/context.ts';
export type { Identity, RowsOptions, PagesOptions, SandboxHandle, SessionSyncOptions } from './session/context.ts';
export type { CountOptions } from './session/count.ts';
export type { RecordSource } from './session/writes.ts';
export { CatalogView, Count, PageSummary, RowList, WriteResult } from './session/results.ts';
export { TextTable, barChart, formatTable } from './session/table.ts';
export { findLeaks, looksSensitive } from './session/secrets.ts';
export { fileState, memoryState } from './exports/state.ts';

/** As connect(): `sandbox` starts an embedded sandbox (seed, scale, latency…) and logs in as `demo`. */
export type SessionOptions = ConnectOptions;

/** What the embedded sandbox of openSession({ sandbox: true }) starts with when nothing is given. */
export const SESSION_SANDBOX_DEFAULTS: SandboxOptions = { seed: DEFAULT_SEED, scale: DEFAULT_OPTIONS.scale };

export async function openSession(opts: SessionOptions = {}): Promise<LenderSession> {
  const connection = await connect(opts);
  try {
    return new LenderSession(connection, new CatalogView(await connection.client.catalog({ signal: opts.signal })));
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
}
