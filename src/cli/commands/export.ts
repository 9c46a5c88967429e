// `lender export`: rows of one or more datasets as NDJSON on stdout (nothing else goes there),
// progress on stderr.
import { once } from 'node:events';
import { finished, type Readable } from 'node:stream';
import { parseCommandArgs, progressFlag } from '../args.ts';
import { datasetCodes, instantFlag, MIN_SPLIT_HELP, READING_OPTIONS, readingFlags } from '../export-flags.ts';
import { EXIT, UsageError, type Command } from '../command.ts';
import { CONNECTION_HELP, CONNECTION_OPTIONS, connectWithFlags } from '../connection-flags.ts';
import { exportPages, type ExportOptions, type ExportPage } from '../../exports/export-stream.ts';
import { AbortError } from '../../core/errors.ts';
import { toMillis } from '../../exports/windows.ts';
import { ndjsonBytes } from '../../exports/ndjson.ts';
import { ProgressLine } from '../../progress.ts';
import { fileState, type StateStore } from '../../exports/state.ts';

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  since: { type: 'string' },
  until: { type: 'string' },
  ...READING_OPTIONS,
  sort: { type: 'string' },
  state: { type: 'string' },
  progress: { type: 'boolean' },
} as const;

const HELP = `Usage: lender export <DATASET...> [options]

Writes the rows of each dataset (e.g. D07, or several: D07 D23) to stdout as NDJSON, one row per
line, datasets one after the other. Nothing else is written to stdout; progress goes to stderr
when it is a terminal or with --progress.

Options:
  --since ISO           inclusive lower bound on the dataset's cursor field (first load only)
  --until ISO           exclusive upper bound (default: up to the service's now)
  --window W            auto (default: months for via datasets, one window for direct ones),
                        none, month, week, day, or an ISO duration such as P10D
  --limit N             page size, 1..1000 (default 1000)
  --sort asc|desc       order on the cursor field (default asc)
  --concurrency N       windows read at once, rows still in order (default 1)
  --unordered           with --concurrency: each page is written as it arrives, whichever
                        window it is from, so a slow window holds the others up no more; rows
                        are then not in cursor order (--state still resumes exactly)
${MIN_SPLIT_HELP}
  --state FILE          resume an interrupted export, or after a completed one export only
                        what changed since (incremental); the file is created if missing
                        (mode 600; an empty file counts as none), and FILE.lock beside it
                        keeps a second run of the same state from starting while this one
                        runs. A pipe closed before the end (| head) once a state was saved
                        exits 1: it may be ahead of what was read
  --progress            progress on stderr even when it is not a terminal
  -h, --help            this text

${CONNECTION_HELP}

Examples:
  lender export D07 --sandbox | head
  lender export D23 --window week --state d23.state.json >> d23.ndjson
`;

const command: Command = {
  name: 'export',
  summary: 'write a dataset as NDJSON rows on stdout',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs(argv, OPTIONS, true);
    if (positionals.length === 0) throw new UsageError('name at least one dataset, e.g. lender export D07');
    const datasets = datasetCodes(positionals);
    const sort = values.sort;
    if (sort !== undefined && sort !== 'asc' && sort !== 'desc') throw new UsageError(`--sort must be asc or desc, not '${sort}'`);
    const since = instantFlag(values.since, '--since');
    const until = instantFlag(values.until, '--until');
    // An empty range is a mistake in the command, not an export of nothing.
    if (since !== undefined && until !== undefined && toMillis(since) >= toMillis(until)) {
      throw new UsageError(`--since ${since} must be before --until ${until}`);
    }
    const reading = readingFlags(values);
    const showProgress = progressFlag(values.progress, io.stderr);
    const state = values.state === undefined ? undefined : fileState(values.state);
    // Taken before anything is sent or written: a second run of the same state stops at once.
    const lock = await state?.lock();
    try {
      // A closed pipe (`| head`) ends the export quietly: the reader has all it wanted (unless a
      // state was saved meanwhile: see below).
      const stop = new AbortController();
      let pipeClosed = false;
      const onStdoutError = (error: NodeJS.ErrnoException) => {
        if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') pipeClosed = true;
        stop.abort(error);
      };
      io.stdout.on('error', onStdoutError);
      const onAbort = () => stop.abort(io.signal.reason);
      io.signal.addEventListener('abort', onAbort, { once: true });

      // Whether this run saved a state: only then can a reader that stopped early have left rows
      // the state counts as delivered.
      let saved = false;
      const saving: StateStore | undefined = state === undefined ? undefined : {
        load: (key) => state.load(key),
        save: (key, value) => {
          saved = true;
          return state.save(key, value);
        },
      };
      const connection = await connectWithFlags(values, io);
      const progress = showProgress ? new ProgressLine(io.stderr) : undefined;
      try {
        for (const code of datasets) {
          const opts: ExportOptions = {
            signal: stop.signal,
            ...(since !== undefined && { since }),
            ...(until !== undefined && { until }),
            ...reading,
            ...(sort !== undefined && { sort }),
            ...(saving !== undefined && { state: saving }),
            includeTotal: showProgress,
          };
          const stream = exportPages(connection.client, code, opts);
          progress?.follow(stream);
          await writePages(stream, io.stdout, stop.signal);
          if (stop.signal.aborted) break;
        }
      } catch (error) {
        // A closed pipe and a stop (Ctrl-C) are said below. Only the stop's own error is the
        // stop: another failure meanwhile (a state that could not be saved) is a failure.
        if (!pipeClosed && !(io.signal.aborted && error instanceof AbortError)) throw error;
      } finally {
        io.signal.removeEventListener('abort', onAbort);
        io.stdout.off('error', onStdoutError);
        await connection.close();
      }
      if (pipeClosed && saved && state !== undefined) {
        // The state records pages handed to the pipe, and the reader did not take them all: the
        // next run would start after rows nobody kept.
        io.stderr.write(`lender export: the reader closed stdout before the export ended; ${state.path} records pages ` +
          'written to the pipe that it may not have read. Write to a file (or use lender sync) when the state must match what was kept.\n');
        return EXIT.failure;
      }
      if (pipeClosed) return EXIT.ok;
      if (io.signal.aborted) {
        io.stderr.write(state === undefined ? 'lender export: stopped.\n'
          : `lender export: stopped; ${state.path} records the pages written to stdout: run the same command again, ` +
            'appending (>>) to the same output, to go on after them.\n');
        return EXIT.interrupted;
      }
      return EXIT.ok;
    } finally {
      await lock?.release();
    }
  },
};
export default command;

/**
 * Writes the rows of every page of `pages` to `out` as NDJSON, waiting for `out` to drain when it
 * asks to, until the pages end (or fail: rejects with their error, as `for await` would throw
 * it), or `stop` is found aborted after a page or a drain wait: then the pages are destroyed and
 * the write ends quietly, as a `break` would (unless the pages failed of something other than
 * the stop during that wait).
 *
 * This is a `for await` over `pages` driven by their 'readable' events instead. On Node 20 a
 * function suspended in a `for await` keeps the page it handled last reachable while the next
 * one is fetched, so every page outlived the young-generation collections that run during that
 * wait: four times the survivors of a plain page loop, and the heap grew into repeated full
 * collections (bench/cli-start.ts).
 */
function writePages(pages: Readable, out: NodeJS.WritableStream, stop: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let waiting = false;
    // A failure of the pages while a drain is awaited counts only if no stop follows the wait.
    let failure: { error: unknown } | undefined;
    const settle = (outcome?: { error: unknown }): void => {
      if (settled) return;
      settled = true;
      pages.off('readable', pump);
      unwatch();
      pages.destroy();
      if (outcome === undefined) resolve();
      else reject(outcome.error);
    };
    function pump(): void {
      while (!settled && !waiting) {
        const page = pages.destroyed ? null : (pages.read() as ExportPage | null);
        if (page === null) return; // 'readable', or the end, comes next
        if (page.rows.length === 0) continue;
        if (!out.write(ndjsonBytes(page.rows))) {
          waiting = true;
          drained(out, stop).then(
            () => {
              waiting = false;
              // A stop ends the write quietly, unless the pages failed of something else meanwhile.
              if (stop.aborted && (failure === undefined || failure.error instanceof AbortError)) settle();
              else if (failure !== undefined) settle(failure);
              else pump();
            },
            (error: unknown) => settle({ error }),
          );
          return;
        }
        if (stop.aborted) {
          settle();
          return;
        }
      }
    }
    const unwatch = finished(pages, { writable: false }, (error) => {
      if (error === undefined || error === null) settle();
      else if (waiting) failure = { error };
      else settle({ error });
    });
    pages.on('readable', pump);
    pump();
  });
}

/**
 * Resolves once `out` drains or `stop` is aborted. Each wait takes its listeners off both when it
 * ends: racing two plain `once()` left one abort listener on `stop` per drain, which piled up
 * over an export into a slow pipe (a MaxListenersExceededWarning after ten pages).
 */
async function drained(out: NodeJS.WritableStream, stop: AbortSignal): Promise<void> {
  if (stop.aborted) return;
  try {
    await once(out as NodeJS.EventEmitter, 'drain', { signal: stop });
  } catch (error) {
    // The stop is the caller's to act on; any other failure of `out` is not.
    if (!stop.aborted) throw error;
  }
}
