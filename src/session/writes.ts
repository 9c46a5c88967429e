// push() and flag(): the account and flag writers fed from an array, an iterable or a file, with
// the rejects collected into the result instead of events (what an interactive user wants).
import { createReadStream } from 'node:fs';
import type { ServiceApi } from '../core/api.ts';
import { createAccountWriter, type AccountWriterOptions } from '../accounts/account-writer.ts';
import { createFlagWriter } from '../accounts/flags.ts';
import { readRecords } from '../accounts/sources/read-records.ts';
import { writeAll } from '../accounts/write-all.ts';
import type { RecordWriter, RejectEvent } from '../accounts/writer.ts';
import { WriteResult, type Reject } from './results.ts';

/** Records in hand, or the path of an NDJSON file or a JSON array / {"accounts": [...]} file. */
export type RecordSource = string | Iterable<unknown> | AsyncIterable<unknown>;

function recordsOf(source: RecordSource): Iterable<unknown> | AsyncIterable<unknown> {
  if (typeof source !== 'string') return source;
  // Streamed, format told from the first bytes: a big file is never loaded whole, and a bad line
  // or element becomes a reject with its position.
  return readRecords(createReadStream(source));
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

async function run<T>(writer: RecordWriter<T>, source: RecordSource): Promise<WriteResult> {
  const { rejects, rejectedByReason, ...summary } = await writeAll(writer, recordsOf(source));
  // The breakdown last: it prints as a nested object.
  return new WriteResult({ ...summary, rejectedByReason }, rejects.map(toReject));
}

export function pushRecords(api: ServiceApi, source: RecordSource, opts: AccountWriterOptions = {}): Promise<WriteResult> {
  // Interactive pushes are small: send at once rather than wait for a quiet second.
  return run(createAccountWriter(api, { flushInterval: 50, ...opts }), source);
}

export function flagRecords(api: ServiceApi, source: RecordSource, opts: { signal?: AbortSignal } = {}): Promise<WriteResult> {
  return run(createFlagWriter(api, { flushInterval: 50, ...opts }), source);
}
