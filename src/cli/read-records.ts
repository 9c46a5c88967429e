// What `lender push` and `lender flag` share: arguments, reading NDJSON or JSON records from a
// file or stdin, the writer, progress on stderr, one summary JSON line on stdout, the exit code.
import { durationFlag, integerFlag, parseCommandArgs, progressFlag } from './args.ts';
import { constants, createReadStream, fstatSync, type Stats } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { Readable, addAbortSignal } from 'node:stream';
import type { ServiceApi } from '../core/api.ts';
import { FileError } from '../core/file-errors.ts';
import { JsonSourceError } from '../accounts/sources/json.ts';
import { readRecords, type ReadRecordsOptions } from '../accounts/sources/read-records.ts';
import type { MalformedRecord, SourceRecord } from '../accounts/source-record.ts';
import { writeAll } from '../accounts/write-all.ts';
import { emptyWriterSummary, type RecordWriter, type RecordWriterOptions, type RejectEvent, type WriterSummary } from '../accounts/writer.ts';
import { describeAnomaly, type AnomalyEvent } from '../accounts/anomaly.ts';
import { DEFAULT_DELIVERY_TIMEOUT_MS } from '../accounts/delivery-deadline.ts';
import { CommandFailure, EXIT, UsageError, type CommandIo } from './command.ts';
import { CONNECTION_OPTIONS, connectWithFlags } from './connection-flags.ts';
import { connectWithin } from './connect-within.ts';
import { ProgressLine, formatWriterProgress } from '../progress.ts';

export interface RecordCommandSpec {
  readonly name: 'push' | 'flag';
  /** Whether --strict is accepted (the account schema has a strict mode; flags have none). */
  readonly strictOption: boolean;
  createWriter(api: ServiceApi, opts: RecordWriterOptions & { strict?: boolean }): RecordWriter<unknown>;
}

/** Rejects named on stderr when there is no --rejects file; also the most anomalies named. */
const SHOWN_REJECTS = 20;

export const RECORD_OPTIONS_HELP = `Input:
  FILE | -              NDJSON or JSON file; - or nothing reads stdin
  --format F            ndjson or json (default: told from the first bytes: [ or {"accounts": [
                        is JSON, anything else NDJSON)
Sending:
  --batch-size N        records per request, 1..10000 (default 500)
  --concurrency N       requests in flight, 1..32 (default 2)
  --delivery-timeout D  time allowed to deliver each batch, from its first request: 2m, 90s,
                        500ms, or a number of milliseconds (default 2m). A 5xx, 504, 429 or
                        dropped connection is retried with jittered backoff until then (the
                        records are upserts, so a resend is harmless); the batch's records are
                        then rejected as failed with the last error. Logging in is retried
                        within it too
  --max-attempts N      also stop after N attempts per request of records, counting the first
                        (default: no count, only --delivery-timeout); 1 turns retries off
Output:
  --rejects FILE        write every rejected record there as NDJSON:
                        {"index","line"|"element","reason","errors","record"}; a record JSON
                        cannot hold (nested too deeply, say) is "recordPreview", its first
                        200 characters, instead of "record". Without it, the first
                        ${SHOWN_REJECTS} rejects are named on stderr (position, reason, errors).
                        Not the input file: it would be emptied before it is read. Created
                        (mode 600) or emptied once logged in, before any record is taken, so a
                        path that cannot be written stops the run before anything is sent
  --progress            progress on stderr even when it is not a terminal
  -h, --help            this text

A summary JSON line goes to stdout: {"received","accepted","rejected","rejectedByReason",
"batches","requests","retries","bytes"}, plus "rejectsFile" with --rejects (unless writing it
failed: the error names it), and "sourceError" when the input could not be read to the end; it
comes also when the run fails or is stopped part way. Reasons: invalid (refused by
validation, never sent), malformed (not a record: a line that is not JSON or not UTF-8, a value
that is not an object), server (named in the service's 400), failed (its batch still failed at
--delivery-timeout or --max-attempts), stopped (held when the run stopped, by Ctrl-C or a
failure: never sent, or sent and unanswered, which the service may have applied). A record nested
more than 64 levels deep is refused by validation. A 400 that names an account not in the request
is reported on stderr ("warning: ... which was not in it"), and the records it did not name are
sent again.

Input must be UTF-8. NDJSON: a bad line (not JSON, not UTF-8) is rejected with its line number
and reading goes on. JSON: the document is streamed, never loaded whole; a syntax error or a
byte that is not UTF-8 cannot be read past, so the records before it are sent, the error is
reported with its line and column, and nothing after it is read (exit 1).

Exit codes: 0 every record accepted; 3 finished, some records rejected; 1 runtime failure
(network, login, server, unreadable input); 2 usage or configuration mistake; 130 interrupted.`;

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  format: { type: 'string' },
  'batch-size': { type: 'string' },
  concurrency: { type: 'string' },
  'max-attempts': { type: 'string' },
  'delivery-timeout': { type: 'string' },
  rejects: { type: 'string' },
  strict: { type: 'boolean' },
  progress: { type: 'boolean' },
} as const;

/** Checked before connecting, so a missing file costs no login. A runtime failure (exit 1): the
 * command line is fine, the file is not there or not readable. */
async function checkReadable(path: string): Promise<void> {
  // No file system names a file so: a mistake in the command line (exit 2), not a missing file.
  if (path.includes('\u0000')) throw new UsageError('a file name cannot contain a NUL character');
  try {
    await access(path, constants.R_OK);
    if ((await stat(path)).isDirectory()) throw new CommandFailure(`${path} is a directory, not a file of records`);
  } catch (error) {
    if (error instanceof CommandFailure) throw error;
    throw new CommandFailure(`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** The rejects file must not be the input: opening it for writing would empty the input first.
 * `input`: the input file, or stdin's file when stdin is one (`< file`). */
async function checkRejectsFile(rejects: string, input: Stats | undefined): Promise<void> {
  if (input === undefined || !input.isFile()) return;
  let target: Stats;
  try {
    target = await stat(rejects);
  } catch {
    return; // not there yet (or not reachable: opening it will say why)
  }
  if (target.dev === input.dev && target.ino === input.ino) {
    throw new UsageError(`--rejects ${rejects} is the input file: writing rejects there would empty it first; choose another file`);
  }
}

/** What stdin is, when it is this process's own (a file redirected with `<`, a pipe, a terminal). */
function stdinStats(io: CommandIo): Stats | undefined {
  if (io.stdin !== process.stdin) return undefined;
  try {
    return fstatSync(0);
  } catch {
    return undefined;
  }
}

interface SourceErrorReport {
  message: string;
  line?: number;
  column?: number;
  offset?: number;
  /** Records read before the error (JSON input). */
  elementsRead?: number;
}

export async function runRecordCommand(spec: RecordCommandSpec, argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, OPTIONS, true);
  if (positionals.length > 1) throw new UsageError(`give one input file (or - for stdin), not ${positionals.length}`);
  if (values.strict !== undefined && !spec.strictOption) throw new UsageError(`--strict is an option of 'lender push' only`);
  const format = values.format;
  if (format !== undefined && format !== 'ndjson' && format !== 'json') {
    throw new UsageError(`--format must be ndjson or json, not '${format}'`);
  }
  const sourceOpts: ReadRecordsOptions = format === undefined ? {} : { format };
  const batchSize = integerFlag(values['batch-size'], '--batch-size', { max: 10_000 });
  const concurrency = integerFlag(values.concurrency, '--concurrency', { max: 32 });
  // No upper bound: time is bounded by --delivery-timeout, whatever the count.
  const maxAttempts = integerFlag(values['max-attempts'], '--max-attempts');
  const deliveryTimeoutMs = durationFlag(values['delivery-timeout'], '--delivery-timeout');
  const file = positionals[0] ?? '-';
  if (file !== '-') await checkReadable(file);
  const inputStats = file === '-' ? stdinStats(io) : await stat(file);
  // Node reads a directory on stdin as empty: the run would "succeed" with nothing read.
  if (file === '-' && inputStats?.isDirectory() === true) throw new CommandFailure('stdin is a directory, not a file of records');
  if (values.rejects !== undefined) await checkRejectsFile(values.rejects, inputStats);

  let connection: Awaited<ReturnType<typeof connectWithFlags>>;
  try {
    connection = await connectWithin(deliveryTimeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS, io.signal, () => connectWithFlags(values, io));
  } catch (error) {
    if (!io.signal.aborted) throw error;
    // Stopped while logging in: no record was read, and the summary still comes, as it does
    // for a stop at any later moment.
    io.stdout.write(`${JSON.stringify({ ...emptyWriterSummary(), stopped: true })}\n`);
    return EXIT.interrupted;
  }
  try {
    const writerOpts: RecordWriterOptions & { strict?: boolean } = { signal: io.signal };
    if (batchSize !== undefined) writerOpts.batchSize = batchSize;
    if (concurrency !== undefined) writerOpts.concurrency = concurrency;
    if (deliveryTimeoutMs !== undefined) writerOpts.deliveryTimeoutMs = deliveryTimeoutMs;
    // Only the attempt count: the backoff stays the client's.
    if (maxAttempts !== undefined) writerOpts.retry = { attempts: maxAttempts };
    if (values.rejects !== undefined) writerOpts.rejects = values.rejects;
    if (values.strict === true) writerOpts.strict = true;
    const writer = spec.createWriter(connection.client, writerOpts);

    const progress = progressFlag(values.progress, io.stderr) ? new ProgressLine(io.stderr) : undefined;
    const started = Date.now();
    const figures = (s: WriterSummary): string => formatWriterProgress(spec.name, s, Date.now() - started);
    writer.on('progress', (s: WriterSummary) => progress?.update(figures(s)));
    // Warnings and rejects get lines of their own, not overwritten by the progress line.
    const note = (text: string): void => void (progress ? progress.note(text) : io.stderr.write(`${text}\n`));

    // Without a rejects file the summary would count rejects whose reasons are nowhere to be
    // seen (a flag for an unknown account, say): name the first few on stderr.
    let unshown = 0;
    if (values.rejects === undefined) {
      let shown = 0;
      writer.on('reject', (r: RejectEvent) => {
        if (shown === SHOWN_REJECTS) {
          unshown += 1;
          return;
        }
        shown += 1;
        const where = r.line !== undefined ? `line ${r.line}` : r.element !== undefined ? `element ${r.element}` : `record ${r.index}`;
        note(`lender ${spec.name}: ${where} rejected (${r.reason}): ${r.errors.join('; ')}`);
      });
    }

    // Always on stderr, --rejects or not: no record is lost to it, but the service said something
    // the request cannot explain, and someone should look.
    let unshownAnomalies = 0;
    let shownAnomalies = 0;
    writer.on('anomaly', (a: AnomalyEvent) => {
      if (shownAnomalies === SHOWN_REJECTS) {
        unshownAnomalies += 1;
        return;
      }
      shownAnomalies += 1;
      note(`lender ${spec.name}: warning: ${describeAnomaly(a)}`);
    });

    // Otherwise a terminal shows only a progress line that does not move.
    if (file === '-' && (io.stdin as { isTTY?: boolean }).isTTY === true) {
      note(`lender ${spec.name}: reading records from the terminal, one JSON object a line; Ctrl-D ends them, Ctrl-C stops.`);
    }
    const input = file === '-' ? io.stdin : createReadStream(file);
    // Ctrl-C stops the reading too: stdin may stay open (a terminal, a pipe from a process that
    // is not done), and the writer would otherwise wait for its next record.
    if (input instanceof Readable) addAbortSignal(io.signal, input);
    let sourceError: SourceErrorReport | undefined;
    // An input that cannot be read to the end (a JSON syntax error, a read that fails) ends the
    // input, not the run: what was read before it is still sent, and the summary says so.
    // Only the reading is caught: a failure of the writer reaches this generator too (thrown in at
    // its yield when the pipeline tears down) and must stay the writer's.
    async function* records(): AsyncGenerator<SourceRecord | MalformedRecord> {
      const read = readRecords(input as AsyncIterable<Buffer | string>, sourceOpts)[Symbol.asyncIterator]();
      try {
        for (;;) {
          let next: IteratorResult<SourceRecord | MalformedRecord>;
          try {
            next = await read.next();
          } catch (error) {
            if (io.signal.aborted) throw error;
            sourceError = error instanceof JsonSourceError
              ? { message: error.message, ...error.position, elementsRead: error.elementsRead }
              : { message: `cannot read ${file === '-' ? 'stdin' : file} to the end: ${error instanceof Error ? error.message : String(error)}` };
            return;
          }
          if (next.done === true) return;
          yield next.value;
        }
      } finally {
        await read.return?.(undefined);
      }
    }

    let stopped = false;
    // A failure of the writer (the rejects file, the session): the summary first, then the error.
    let failure: unknown;
    try {
      await writeAll(writer, records(), { keepRejects: false });
    } catch (error) {
      if (io.signal.aborted) stopped = true;
      else failure = error;
    }
    const summary = writer.summary;
    progress?.done(figures(summary));
    const out: Record<string, unknown> = { ...summary };
    // A FileError of the writer is its rejects file's (opening or writing it): the error names it.
    if (values.rejects !== undefined && !(failure instanceof FileError)) out.rejectsFile = values.rejects;
    if (sourceError !== undefined) out.sourceError = sourceError;
    if (stopped) out.stopped = true;
    io.stdout.write(`${JSON.stringify(out)}\n`);
    if (unshown > 0) io.stderr.write(`lender ${spec.name}: ${unshown} more rejected records not shown; --rejects FILE keeps them all.\n`);
    if (unshownAnomalies > 0) io.stderr.write(`lender ${spec.name}: warning: ${unshownAnomalies} more requests refused naming an account not in them.\n`);
    if (sourceError !== undefined) io.stderr.write(`lender ${spec.name}: ${(sourceError as SourceErrorReport).message}\n`);
    if (failure !== undefined) throw failure;
    if (stopped) return EXIT.interrupted;
    if (sourceError !== undefined) return EXIT.failure;
    return summary.rejected > 0 ? EXIT.rejected : EXIT.ok;
  } finally {
    await connection.close();
  }
}
