// `lender sync`: initial then incremental loads into one NDJSON file per dataset, with the state
// saved after every page. Ctrl-C stops after the page being written; a re-run resumes.
import { join, resolve } from 'node:path';
import { EXIT, UsageError, type Command } from '../command.ts';
import { CONNECTION_HELP, CONNECTION_OPTIONS, connectWithFlags } from '../connection-flags.ts';
import { datasetCodes, parseCommandArgs, progressFlag, readingFlags } from '../args.ts';
import { ProgressLine } from '../../progress.ts';
import { fileState } from '../../exports/state.ts';
import { DEFAULT_STATE_FILE, datasetSummary, sync, type DatasetSyncSummary } from '../../exports/sync.ts';
import { SyncError } from '../../exports/errors.ts';

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  out: { type: 'string' },
  datasets: { type: 'string' },
  state: { type: 'string' },
  window: { type: 'string' },
  limit: { type: 'string' },
  concurrency: { type: 'string' },
  progress: { type: 'boolean' },
} as const;

const HELP = `Usage: lender sync --out DIR [options]

Loads datasets into DIR/<code>.ndjson (appending). The first run of a dataset is a full initial
load; each later run fetches only rows changed since the previous one (rows at the boundary are
not written twice). The state is saved after every page, once its rows are on disk: an
interrupted run (Ctrl-C, crash) is resumed by running the same command again, and at worst
re-appends the rows of the one page that was not yet saved. Consumers upsert by public_id.

One run at a time per state file: while a run holds it (a .lock file beside it), another stops
at once with exit 1 and one line on stderr naming the holder, having written nothing. A lock left
by a process that has ended on this host is taken over; one from another host never is. The data
files (personal data), the state file and its lock are created mode 600.

Prints one JSON object on stdout: {out, state, datasets: {<code>: {dataset, file, mode, rows,
pages, windows, splits, retries}}}. A dataset that fails (not available, retries exhausted) does
not stop the others: it is named on stderr and under "failed" in that object, and the exit code
is 1; run the same command again to retry it.

Options:
  --out DIR             folder of the NDJSON files (created if missing)
  --datasets LIST       comma-separated codes, e.g. D01,D07 (default: every dataset the live
                        catalog lists as available)
  --state FILE          state file (default DIR/${DEFAULT_STATE_FILE})
  --window W            auto (default), none, month, week, day or an ISO duration such as P10D
  --limit N             page size, 1..1000 (default 1000)
  --concurrency N       windows read at once per dataset (default 1)
  --progress            progress on stderr even when it is not a terminal

${CONNECTION_HELP}
`;

const command: Command = {
  name: 'sync',
  summary: 'initial then incremental load of datasets into a folder',
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, OPTIONS);
    if (values.out === undefined || values.out === '') throw new UsageError('--out DIR is required');
    const out = resolve(values.out);
    const datasets = values.datasets === undefined ? undefined : datasetCodes(values.datasets.split(',').filter((s) => s.trim() !== ''), 'dataset in --datasets');
    if (datasets !== undefined && datasets.length === 0) throw new UsageError('--datasets needs at least one code, e.g. D01,D07');
    const reading = readingFlags(values);
    const statePath = values.state === undefined ? join(out, DEFAULT_STATE_FILE) : resolve(values.state);
    const showProgress = progressFlag(values.progress, io.stderr);
    const progress = showProgress ? new ProgressLine(io.stderr) : undefined;

    const state = fileState(statePath);
    // Taken before connecting: a second run of the same state stops at once, having written nothing.
    const lock = await state.lock();
    try {
      const connection = await connectWithFlags(values, io);
      const summaries: DatasetSyncSummary[] = [];
      try {
        const result = await sync(connection.client, datasets, {
          out,
          state,
          signal: io.signal,
          ...reading,
          onStream: (stream) => {
            progress?.follow(stream);
            stream.once('end', () => summaries.push(datasetSummary(stream, out)));
          },
        });
        io.stdout.write(JSON.stringify({ out, state: statePath, datasets: result }) + '\n');
        return EXIT.ok;
      } catch (error) {
        if (error instanceof SyncError) {
          for (const [code, failure] of Object.entries(error.failures)) io.stderr.write(`lender sync: ${code} failed: ${failure.message}\n`);
          const failed = Object.fromEntries(Object.entries(error.failures).map(([code, failure]) => [code, failure.message]));
          io.stdout.write(JSON.stringify({ out, state: statePath, datasets: error.summary, failed }) + '\n');
          return EXIT.failure;
        }
        if (!io.signal.aborted) throw error;
        io.stderr.write(`lender sync: stopped; progress is saved in ${statePath}, run the same command again to resume.\n`);
        const done = Object.fromEntries(summaries.map((s) => [s.dataset, s]));
        io.stdout.write(JSON.stringify({ out, state: statePath, datasets: done, stopped: true }) + '\n');
        return EXIT.failure;
      } finally {
        await connection.close();
      }
    } finally {
      await lock.release();
    }
  },
};
export default command;
