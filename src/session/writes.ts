// push() and flag(): the account and flag writers fed from an array, an iterable or a file, with
// the rejects collected into the result instead of events (what an interactive user wants).
//
// The writers, their record schemas (zod) and the file readers load at the first push or flag: a
// session that only reads, and the REPL's start, never pay for them.
import { open } from 'node:fs/promises';
import { aboutFile } from '../core/file-errors.ts';
import type { ServiceApi } from '../core/api.ts';
import type { AccountWriterOptions } from '../accounts/account-writer.ts';
import type { RecordWriter, RecordWriterOptions, RejectEvent } from '../accounts/writer.ts';
import { WriteResult, type Reject } from './results.ts';

/** Records in hand, or the path of an NDJSON file or a JSON array / {"accounts": [...]} file. */
export type RecordSource = string | Iterable<unknown> | AsyncIterable<unknown>;

/** The records, and how to let go of their file if they are not read after all. */
async function recordsOf(source: RecordSource): Promise<{ records: Iterable<unknown> | AsyncIterable<unknown>; discard(): void }> {
  if (typeof source !== 'string') return { records: source, discard: () => undefined };
  const { readRecords } = await import('../accounts/sources/read-records.ts');
  // Opened here so that a missing file, or a folder, is a FileError naming it before anything
  // is sent, not a stream's bare ENOENT.
  const handle = await aboutFile('read the records file', source, async () => {
    const opened = await open(source, 'r');
    try {
      if ((await opened.stat()).isDirectory()) {
        throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${source}'`), { code: 'EISDIR' });
      }
      return opened;
    } catch (error) {
      await opened.close();
      throw error;
    }
  });
  // Streamed, format told from the first bytes: a big file is never loaded whole, and a bad line
  // or element becomes a reject with its position.
  const stream = handle.createReadStream();
  return { records: readRecords(stream), discard: () => stream.destroy() };
}

function toReject(event: RejectEvent): Reject {
  const record = event.record as { accountId?: unknown } | null;
  const accountId = record !== null && typeof record === 'object' && typeof record.accountId === 'string' ? record.accountId : undefined;
  const where = event.line !== undefined ? `line ${event.line}` : event.element !== undefined ? `element ${event.element}` : undefined;
  return {
    index: event.index,
    ...(accountId !== undefined ? { accountId } : {}),
    errors: event.errors,
    ...(where !== undefined ? { where } : {}),
  };
}

/** `makeWriter` is called once the records are in hand (a file opened): a file that cannot be
 * read leaves no writer behind, nor its rejects file opened. */
async function run<T>(makeWriter: () => RecordWriter<T>, source: RecordSource): Promise<WriteResult> {
  const { writeAll } = await import('../accounts/write-all.ts');
  const { records, discard } = await recordsOf(source);
  let writer: RecordWriter<T>;
  try {
    writer = makeWriter();
  } catch (error) {
    discard();
    throw error;
  }
  const { rejects, rejectedByReason, ...summary } = await writeAll(writer, records).catch((error: unknown) => {
    discard(); // a writer that failed before it read anything leaves the file open otherwise
    throw error;
  });
  // The breakdown last: it prints as a nested object.
  return new WriteResult({ ...summary, rejectedByReason }, rejects.map(toReject));
}

export async function pushRecords(api: ServiceApi, source: RecordSource, opts: AccountWriterOptions = {}): Promise<WriteResult> {
  const { createAccountWriter } = await import('../accounts/account-writer.ts');
  // Interactive pushes are small: send at once rather than wait for a quiet second.
  return run(() => createAccountWriter(api, { flushInterval: 50, ...opts }), source);
}

export async function flagRecords(api: ServiceApi, source: RecordSource, opts: RecordWriterOptions = {}): Promise<WriteResult> {
  const { createFlagWriter } = await import('../accounts/flags.ts');
  return run(() => createFlagWriter(api, { flushInterval: 50, ...opts }), source);
}
