// `lender sync`: initial then incremental loads into a sink (DuckDB by default, NDJSON files or
// PostgreSQL), each page committed with its state. Ctrl-C stops after the page being committed;
// a re-run resumes.
import { join, resolve } from 'node:path';
import { EXIT, UsageError, type Command } from '../command.ts';
import { CONNECTION_HELP, CONNECTION_OPTIONS, checkConnectionFlags, connectWithFlags } from '../connection-flags.ts';
import { checked, parseCommandArgs, progressFlag } from '../args.ts';
import { datasetCodes, MIN_SPLIT_HELP, READING_OPTIONS, readingFlags } from '../export-flags.ts';
import { ProgressLine } from '../../progress.ts';
import { fileState, type FileStateStore } from '../../exports/state.ts';
import { failuresByMessage, SyncError } from '../../exports/errors.ts';
import { DEFAULT_STATE_FILE } from '../../sinks/ndjson-sink.ts';
import { openSink } from '../../sinks/open-sink.ts';
import { DEFAULT_DUCKDB_FILE, parseSinkSpec, type SinkSpec } from '../../sinks/sink-spec.ts';
import { parseLease } from '../../sinks/postgres/lease-board.ts';
import { checkSchemaName } from '../../sinks/postgres/store.ts';
import { datasetSummary, sync, sinkDataset, SYNC_CONCURRENCY, type DatasetSyncSummary } from '../../sinks/sync.ts';

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  to: { type: 'string' },
  out: { type: 'string' },
  schema: { type: 'string' },
  lease: { type: 'string' },
  datasets: { type: 'string' },
  state: { type: 'string' },
  ...READING_OPTIONS,
  progress: { type: 'boolean' },
} as const;

const HELP = `Usage: lender sync [--to SINK] [options]

Loads datasets into a sink: the first run of a dataset is a full initial load, each later run
fetches only rows changed since the previous one. Every page's rows are committed together with
the state that follows them, so an interrupted run (Ctrl-C, crash, SIGKILL) is resumed by running
the same command again, with no row lost and none written twice.

Sinks (--to):
  duckdb:FILE           a DuckDB database, one table per dataset, rows upserted by public_id
                        (D16, whose public_id is not unique, by the row's content), the state
                        in the table _lender_state (default: duckdb:${DEFAULT_DUCKDB_FILE})
  ndjson:DIR            DIR/<code>.ndjson per dataset, appended to (an incremental run appends
                        the new versions of changed rows), the state in DIR/${DEFAULT_STATE_FILE}
  postgres://USER@HOST:PORT/DB
                        a PostgreSQL database, tables in --schema, rows upserted as in DuckDB.
                        The password comes from PGPASSWORD or ~/.pgpass, never from --to
                        (DATABASE_URL is not read then).
                        postgres: alone uses DATABASE_URL (its password too) or the PG*
                        variables. Several runs pointed at one database share the work
                        (datasets and windows are leased): run more of them to load faster.

One run at a time per NDJSON state file or DuckDB file: another stops at once with exit 1 and one
line on stderr, having written nothing. Files are created mode 600.

Prints one JSON object on stdout: {to, state (NDJSON: the state file), datasets: {<code>:
{dataset, location, mode, rows, pages, windows, splits, retries}}} (windows: those this run read
to their end). A dataset that fails (not available, retries exhausted) does not stop the others:
it is named on stderr and under "failed" in that object, and the exit code is 1; run the same
command again to retry it. New columns and values that did not fit their column's type are
reported on stderr, once each.

Options:
  --to SINK             where the rows go (above)
  --out DIR             the same as --to ndjson:DIR
  --schema NAME         PostgreSQL schema of the tables, 1 to 63 bytes (default lender)
  --lease DURATION      PostgreSQL: how long a worker's claim on a part of a load lasts without
                        renewal, from 100ms to 24h, e.g. 30s (the default) or PT1M; a stopped
                        worker's part is taken over after it (at once when it ran on this host
                        and its process is gone)
  --datasets LIST       comma-separated codes, e.g. D01,D07 (default: every dataset the live
                        catalog lists as available)
  --state FILE          NDJSON only: the state file (default DIR/${DEFAULT_STATE_FILE})
  --window W            auto (default), none, month, week, day or an ISO duration such as P10D
  --limit N             page size, 1..1000 (default 1000)
  --concurrency N       windows read at once per dataset (default ${SYNC_CONCURRENCY}); with PostgreSQL
                        almost no effect (a worker reads one part at a time, page after page):
                        run more workers instead
  --unordered           with 2 or more windows at once: each page is committed as it arrives,
                        whichever window it is from (a resume is still exact; an NDJSON file
                        may then hold a row changed during the load in its older version last)
${MIN_SPLIT_HELP}
  --progress            progress on stderr even when it is not a terminal
  -h, --help            this text

${CONNECTION_HELP}
`;

function sinkSpecOf(values: { to?: string | undefined; out?: string | undefined }): SinkSpec {
  if (values.to !== undefined && values.out !== undefined) throw new UsageError('give --to or --out, not both');
  if (values.out !== undefined) {
    if (values.out === '') throw new UsageError('--out needs a folder');
    return { kind: 'ndjson', dir: resolve(values.out) };
  }
  return checked(() => parseSinkSpec(values.to ?? `duckdb:${DEFAULT_DUCKDB_FILE}`));
}

/** --lease in ms, within the lease's bounds (the PostgreSQL sink's, named as the flag). */
function leaseFlag(value: string | undefined): number | undefined {
  return value === undefined ? undefined : checked(() => parseLease(value, '--lease'));
}

const command: Command = {
  name: 'sync',
  summary: 'initial then incremental load of datasets into DuckDB, NDJSON files or PostgreSQL',
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, OPTIONS);
    const spec = sinkSpecOf(values);
    if (values.state !== undefined && spec.kind !== 'ndjson') throw new UsageError('--state goes with an NDJSON sink; a database keeps its state in itself');
    if (values.schema !== undefined && spec.kind !== 'postgres') throw new UsageError('--schema goes with a PostgreSQL sink');
    if (values.lease !== undefined && spec.kind !== 'postgres') throw new UsageError('--lease goes with a PostgreSQL sink');
    const lease = leaseFlag(values.lease);
    if (values.schema !== undefined) checked(() => checkSchemaName(values.schema!, '--schema'));
    const datasets = values.datasets === undefined ? undefined : datasetCodes(values.datasets.split(',').filter((s) => s.trim() !== ''), 'dataset in --datasets');
    if (datasets !== undefined && datasets.length === 0) throw new UsageError('--datasets needs at least one code, e.g. D01,D07');
    const reading = readingFlags(values, SYNC_CONCURRENCY);
    const showProgress = progressFlag(values.progress, io.stderr);
    const progress = showProgress ? new ProgressLine(io.stderr) : undefined;

    // Settings checked before the sink is opened: opening a DuckDB file creates it.
    await checkConnectionFlags(values, io);
    let state: FileStateStore | undefined;
    if (spec.kind === 'ndjson') state = fileState(values.state === undefined ? join(spec.dir, DEFAULT_STATE_FILE) : resolve(values.state));
    const sink = await openSink(spec, {
      ...(state !== undefined && { state }),
      ...(values.schema !== undefined && { schema: values.schema }),
      ...(lease !== undefined && { lease }),
      env: io.env,
      onNotice: (notice) => {
        const line = `lender sync: ${notice.message}`;
        if (progress !== undefined) progress.note(line);
        else io.stderr.write(`${line}\n`);
      },
    });
    const shared = sink.leases !== undefined;
    const head = { to: sink.target, ...(state !== undefined && { state: state.path }) };
    try {
      // Taken before connecting: a second run on the same sink stops at once, having written nothing.
      const lock = await sink.lock?.();
      const summaries: DatasetSyncSummary[] = [];
      const stored = new Map<string, number>();
      const reportStop = (): number => {
        io.stderr.write(summaries.length === 0 ? 'lender sync: stopped before any dataset was read; run the same command again.\n'
          : `lender sync: stopped; progress is saved in ${state?.path ?? sink.target}, run the same command again to resume.\n`);
        // Each dataset read before the stop, the one stopped midway too (a shared load reads a
        // dataset in parts): the stream's counts of what it read, and the rows stored.
        const done: Record<string, DatasetSyncSummary> = {};
        for (const s of summaries) {
          const d = done[s.dataset];
          done[s.dataset] = d === undefined ? s : {
            ...d, pages: d.pages + s.pages, windows: d.windows + s.windows, splits: d.splits + s.splits, retries: d.retries + s.retries,
          };
        }
        for (const d of Object.values(done)) d.rows = stored.get(d.dataset) ?? 0;
        io.stdout.write(JSON.stringify({ ...head, datasets: done, stopped: true }) + '\n');
        return EXIT.interrupted;
      };
      try {
        // Stopped while logging in: the same summary, with nothing read, for scripts that parse it.
        const connection = await connectWithFlags(values, io).catch((error: unknown) => {
          if (io.signal.aborted) return undefined;
          throw error;
        });
        if (connection === undefined) return reportStop();
        try {
          const result = await sync(connection.client, datasets, {
            to: sink,
            signal: io.signal,
            ...reading,
            onCommit: (code, rows) => stored.set(code, (stored.get(code) ?? 0) + rows),
            onStream: (stream) => {
              // A shared sink reads a dataset in parts, possibly interleaved with other datasets.
              if (shared) progress?.followPart(stream);
              else progress?.follow(stream);
              // 'close' follows 'end', and also a stream stopped midway (Ctrl-C): that one is in the summary too.
              stream.once('close', () => summaries.push(datasetSummary(stream, sink.location(sinkDataset(stream.dataset)))));
            },
          });
          progress?.finishParts();
          io.stdout.write(JSON.stringify({ ...head, datasets: result }) + '\n');
          return EXIT.ok;
        } catch (error) {
          if (error instanceof SyncError) {
            for (const [codes, message] of failuresByMessage(error.failures)) io.stderr.write(`lender sync: ${codes.join(', ')} failed: ${message}\n`);
            const failed = Object.fromEntries(Object.entries(error.failures).map(([code, failure]) => [code, failure.message]));
            io.stdout.write(JSON.stringify({ ...head, datasets: error.summary, failed }) + '\n');
            return EXIT.failure;
          }
          if (!io.signal.aborted) throw error;
          return reportStop();
        } finally {
          await connection.close();
        }
      } finally {
        await lock?.release();
      }
    } finally {
      await sink.close();
    }
  },
};
export default command;
