// openSession(): the preloaded context shared by the REPL and notebooks. It resolves credentials
// like the CLI (options, else LENDER_* environment, else the credentials file) or, with
// `sandbox`, starts an embedded sandbox and logs in as its `demo` lender.
//
//   const s = await openSession({ sandbox: true });
//   await s.rows('D07', { limit: 5 });   // prints as a table
//   await s.count('D23');                // via dataset: counted per month and summed
//   await s.describe('D07');             // fields, types, nulls, span and count
//   await s.sync(['D07'], { to: 'duckdb:lender.duckdb' });
//   await s.sql('SELECT payment_status, count(*) AS n FROM d07 GROUP BY ALL');
//   await s.close();
//
// This entry holds openSession, the session and the values and options of its helpers. State
// stores come from the main entry; the table, chart and secret checks the REPL uses internally
// are imported from their modules.
import { connect, type ConnectOptions } from './connect.ts';
import { LenderSession } from './session/context.ts';
import { CatalogView } from './session/results.ts';

// ---- the session and its helpers' options
export { LenderSession } from './session/context.ts';
export type { Identity, RowsOptions, PagesOptions, SandboxHandle, SessionSyncOptions } from './session/context.ts';
export type { CountOptions } from './session/count.ts';
export type { DescribeOptions, FieldSummary } from './session/describe.ts';
export type { SqlOptions } from './session/sql.ts';
export type { ChartData, ChartOptions, LabelValues, VegaLiteSpec } from './session/chart.ts';
export type { RecordSource } from './session/writes.ts';
export type { SecretValues } from './session/secrets.ts';

// ---- what the helpers return: each prints as a short summary and serialises to plain data
export { SyncResult } from './session/context.ts';
export { CatalogView, Count, PageSummary, RowList, WriteResult } from './session/results.ts';
export { TextTable } from './session/table.ts';
export { Description } from './session/describe.ts';
export { QueryResult } from './session/sql.ts';

// ---- charts outside a notebook: the SVG a notebook would show
export { chartSvg } from './session/chart.ts';

/**
 * Options of {@link openSession}: connection settings (else the `LENDER_*` environment, else the
 * credentials file), or `sandbox` to start an embedded sandbox (seed, scale, latency…) and log in as `demo`.
 */
export type SessionOptions = ConnectOptions;

/**
 * Opens a logged-in session for exploring the service (the REPL and notebooks use it), with
 * credentials resolved like the CLI's, or on an embedded sandbox with `{ sandbox: true }`.
 */
export async function openSession(opts: SessionOptions = {}): Promise<LenderSession> {
  const connection = await connect(opts);
  try {
    return new LenderSession(connection, new CatalogView(await connection.client.catalog({ signal: opts.signal })));
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
}
