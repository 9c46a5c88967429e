// The demo: the whole product on an embedded sandbox. Push a sample portfolio through the account
// writer (rejects to a file), flag a debtor do-not-contact and an account disputed, wait for the
// sandbox to process everything, sync every available dataset into a DuckDB file, then answer a
// question about the payments in SQL. A second run against the same folder is an incremental sync
// (the state is in the database): the sandbox is started with the same seed, so the lender and
// its data are the same, and the re-pushed portfolio carries fresh timestamps.
import { join, resolve } from 'node:path';
import { createAccountWriter } from '../accounts/account-writer.ts';
import { setFlags } from '../accounts/flags.ts';
import { writeAll } from '../accounts/write-all.ts';
import { datasetInfo } from '../core/catalog.ts';
import { makeFolder } from '../core/make-folder.ts';
import type { LenderClient } from '../client/client.ts';
import { connect } from '../connect.ts';
import { DuckDbLockedError, duckdbSink, type DuckDbSink } from '../sinks/duckdb-sink.ts';
import type { SinkNotice } from '../sinks/sink.ts';
import { sync } from '../sinks/sync.ts';
import { ProgressLine, formatBar } from '../progress.ts';
import { samplePortfolio, DEFAULT_PORTFOLIO_SIZE } from './portfolio.ts';

export interface DemoOptions {
  /** Folder of the database (lender.duckdb) and the rejects file. */
  out: string;
  /** Records in the sample portfolio. */
  records?: number;
  /** Seed of the embedded sandbox; the same seed gives the same lender and data on every run. */
  seed: number;
  /** Where progress goes (stderr). */
  progress: NodeJS.WritableStream;
  signal?: AbortSignal;
}

export interface DemoDataset {
  code: string;
  name: string;
  mode: 'initial' | 'incremental' | 'resumed';
  /** Rows fetched by this run. */
  fetched: number;
  /** Rows in the dataset's table after this run: each row once, in its latest version. */
  inTable: number;
  pages: number;
  /** The table, e.g. d07. */
  table: string;
}

/** The demo's question and its answer: D07's payments by month and status. */
export interface DemoPayments {
  sql: string;
  rows: { month: string; status: string; payments: number; amount: number }[];
}

/** The database file the demo syncs into, in its folder. */
export const DEMO_DATABASE = 'lender.duckdb';

/** Payments by month (of their last update, in UTC) and status, over the last three months of
 * data. Shown as it is, for users to run themselves. */
export const PAYMENTS_SQL = `SELECT strftime(updated_at AT TIME ZONE 'UTC', '%Y-%m') AS month,
       payment_status AS status, count(*) AS payments, sum(amount) AS amount
FROM d07
WHERE updated_at AT TIME ZONE 'UTC' >= (SELECT date_trunc('month', max(updated_at) AT TIME ZONE 'UTC') - INTERVAL 2 MONTH FROM d07)
GROUP BY month, status
ORDER BY month, status`;

export interface DemoResult {
  out: string;
  /** The DuckDB file: the tables, and the state in its _lender_state table. */
  database: string;
  rejectsFile: string;
  authUrl: string;
  push: { records: number; accepted: number; rejected: number; batches: number; retries: number };
  /** Rejected records grouped by the first error message, most frequent first. */
  rejectReasons: { reason: string; count: number }[];
  flags: {
    accepted: number;
    rejected: number;
    doNotContact: { debtorCompanyId: string; accounts: number };
    disputed: { debtorCompanyId: string; accountId: string };
  };
  datasets: DemoDataset[];
  payments: DemoPayments;
  /** What the database told of its tables: created, columns added, values that did not fit. */
  notices: SinkNotice[];
  timings: { sandbox: number; push: number; flags: number; drain: number; sync: number; total: number };
}

export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const t0 = performance.now();
  const lap = (() => {
    let last = t0;
    return () => {
      const now = performance.now();
      const ms = now - last;
      last = now;
      return Math.round(ms);
    };
  })();
  const out = resolve(opts.out);
  await makeFolder(out);
  const rejectsFile = join(out, 'rejects.ndjson');
  const database = join(out, DEMO_DATABASE);
  const portfolio = samplePortfolio(opts.records ?? DEFAULT_PORTFOLIO_SIZE);

  // The database is held from the start: while another process has it (a second demo on the same
  // folder, say), this run is refused before it writes anything there (its rejects file would
  // otherwise replace that run's).
  const notices: SinkNotice[] = [];
  const sink = duckdbSink({ path: database, onNotice: (notice) => notices.push(notice) });
  const hold = await sink.lock().catch(async (error: unknown) => {
    await sink.close();
    if (!(error instanceof DuckDbLockedError) || error.holder.thisProcess) throw error;
    const pid = error.holder.pid === undefined ? '' : ` (pid ${error.holder.pid})`;
    throw new DuckDbLockedError(database, error.holder, {
      cause: error, message: `${database} is open in another process${pid}, another demo or a DuckDB session on that file: ` +
        'wait for it to end or close it, or give another --out.',
    });
  });
  lap(); // the database's opening is not the sandbox's start
  let connection: Awaited<ReturnType<typeof connect>> | undefined;
  try {
    connection = await connect({ sandbox: { seed: opts.seed }, ...(opts.signal && { signal: opts.signal }) });
    const { client } = connection;
    const sandbox = connection.sandbox!;
    const sandboxMs = lap();

    // ---- push
    const total = portfolio.records.length;
    const bar = new ProgressLine(opts.progress, { pipe: 'final' });
    const writer = createAccountWriter(client, {
      batchSize: 500, concurrency: 4, rejects: rejectsFile, ...(opts.signal && { signal: opts.signal }),
    });
    const show = () => {
      const s = writer.summary;
      bar.update(formatBar('push    ', (s.accepted + s.rejected) / total, `${s.accepted + s.rejected}/${total} records, ${s.rejected} rejected`));
    };
    writer.on('reject', show);
    writer.on('progress', show);
    const pushed = await writeAll(writer, portfolio.records);
    bar.done(formatBar('push    ', 1, `${total}/${total} records, ${pushed.accepted} accepted, ${pushed.rejected} rejected → ${rejectsFile}`));
    const reasons = new Map<string, number>();
    for (const event of pushed.rejects) {
      const reason = event.errors[0] ?? event.reason;
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    }
    // Drained before flagging so the flags meet the accounts as processed, not as queued.
    await sandbox.drain();
    const pushMs = lap();

    // ---- flags
    const flagged = await setFlags(client, [
      { status: 'doNotContact', debtorCompanyId: portfolio.doNotContact.debtorCompanyId, accountId: portfolio.doNotContact.accountId },
      { status: 'disputed', debtorCompanyId: portfolio.disputed.debtorCompanyId, accountId: portfolio.disputed.accountId },
    ], opts.signal ? { signal: opts.signal } : {});
    const flagsMs = lap();

    // The service processes accepted data in the background; the export shows it once applied.
    await sandbox.drain();
    const drainMs = lap();

    // ---- sync, then a question in SQL
    const { datasets, payments } = await syncAndAsk(client, sink, opts);
    const syncMs = lap();

    return {
      out,
      database,
      rejectsFile,
      authUrl: sandbox.authUrl,
      push: { records: total, accepted: pushed.accepted, rejected: pushed.rejected, batches: pushed.batches, retries: pushed.retries },
      rejectReasons: [...reasons].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
      flags: {
        accepted: flagged.accepted,
        rejected: flagged.rejected,
        doNotContact: { debtorCompanyId: portfolio.doNotContact.debtorCompanyId, accounts: portfolio.doNotContact.accounts },
        disputed: { ...portfolio.disputed },
      },
      datasets,
      payments,
      notices,
      timings: { sandbox: sandboxMs, push: pushMs, flags: flagsMs, drain: drainMs, sync: syncMs, total: Math.round(performance.now() - t0) },
    };
  } finally {
    try {
      await connection?.close();
    } finally {
      await hold.release();
      await sink.close();
    }
  }
}

/** Syncs every available dataset into the database, then counts each table and asks PAYMENTS_SQL. */
async function syncAndAsk(
  client: LenderClient, sink: DuckDbSink, opts: DemoOptions,
): Promise<{ datasets: DemoDataset[]; payments: DemoPayments }> {
  const summary = await sync(client, undefined, {
    to: sink,
    includeTotal: true,
    ...(opts.signal && { signal: opts.signal }),
    onStream: (stream) => {
      new ProgressLine(opts.progress, { pipe: 'final' }).followBar(stream, stream.dataset.code.padEnd(8));
    },
  });
  const datasets: DemoDataset[] = [];
  for (const s of Object.values(summary)) {
    const table = s.dataset.toLowerCase();
    const [count] = await sink.query(`SELECT count(*) AS n FROM ${table}`);
    datasets.push({
      code: s.dataset,
      name: datasetInfo(s.dataset)?.name ?? s.dataset,
      mode: s.mode,
      fetched: s.rows,
      inTable: Number(count?.n ?? 0),
      pages: s.pages,
      table,
    });
  }
  const answer = await sink.query(PAYMENTS_SQL);
  const rows = answer.map((r) => ({ month: String(r.month), status: String(r.status), payments: Number(r.payments), amount: Number(r.amount) }));
  return { datasets, payments: { sql: PAYMENTS_SQL, rows } };
}
