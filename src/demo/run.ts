// The demo: the whole product on an embedded sandbox. Push a sample portfolio through the account
// writer (rejects to a file), flag a debtor do-not-contact and an account disputed, wait for the
// sandbox to process everything, then sync every available dataset into a folder. A second run
// against the same folder is an incremental sync: the sandbox is started with the same seed, so
// the lender and its data are the same, and the re-pushed portfolio carries fresh timestamps.
import { createReadStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createAccountWriter } from '../accounts/account-writer.ts';
import { setFlags } from '../accounts/flags.ts';
import { writeAll } from '../accounts/write-all.ts';
import { datasetInfo } from '../core/catalog.ts';
import { connect } from '../connect.ts';
import { fileState } from '../exports/state.ts';
import { DEFAULT_STATE_FILE } from '../sinks/ndjson-sink.ts';
import { sync } from '../sinks/sync.ts';
import { ProgressLine, formatBar } from '../progress.ts';
import { samplePortfolio, DEFAULT_PORTFOLIO_SIZE } from './portfolio.ts';

export interface DemoOptions {
  /** Folder of the NDJSON files, the state file and the rejects file. */
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
  /** Rows written by this run. */
  fetched: number;
  /** Lines in the dataset's file after this run (earlier runs' rows included). */
  inFile: number;
  pages: number;
  file: string;
}

export interface DemoResult {
  out: string;
  stateFile: string;
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
  timings: { sandbox: number; push: number; flags: number; drain: number; sync: number; total: number };
}

/** Counts newline-terminated lines without holding the file in memory. */
export async function countLines(path: string): Promise<number> {
  let lines = 0;
  try {
    for await (const chunk of createReadStream(path)) {
      const buffer = chunk as Buffer;
      for (let i = buffer.indexOf(0x0a); i !== -1; i = buffer.indexOf(0x0a, i + 1)) lines += 1;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  return lines;
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
  await mkdir(out, { recursive: true });
  const rejectsFile = join(out, 'rejects.ndjson');
  const stateFile = join(out, DEFAULT_STATE_FILE);
  const portfolio = samplePortfolio(opts.records ?? DEFAULT_PORTFOLIO_SIZE);

  const connection = await connect({ sandbox: { seed: opts.seed }, ...(opts.signal && { signal: opts.signal }) });
  const { client } = connection;
  const sandbox = connection.sandbox!;
  try {
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

    // ---- sync
    const summary = await sync(client, undefined, {
      out,
      state: fileState(stateFile),
      includeTotal: true,
      ...(opts.signal && { signal: opts.signal }),
      onStream: (stream) => {
        new ProgressLine(opts.progress, { pipe: 'final' }).followBar(stream, stream.dataset.code.padEnd(8));
      },
    });
    const syncMs = lap();

    const datasets: DemoDataset[] = [];
    for (const s of Object.values(summary)) {
      datasets.push({
        code: s.dataset,
        name: datasetInfo(s.dataset)?.name ?? s.dataset,
        mode: s.mode,
        fetched: s.rows,
        inFile: await countLines(s.location),
        pages: s.pages,
        file: s.location,
      });
    }
    return {
      out,
      stateFile,
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
      timings: { sandbox: sandboxMs, push: pushMs, flags: flagsMs, drain: drainMs, sync: syncMs, total: Math.round(performance.now() - t0) },
    };
  } finally {
    await connection.close();
  }
}
