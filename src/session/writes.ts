// push() and flag(): the account and flag writers fed from an array, an iterable or a file, with
// the rejects collected into the result instead of events (what an interactive user wants).
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ServiceApi } from '../client/api.ts';
import { createAccountWriter, type AccountWriterOptions } from '../accounts/account-writer.ts';
import { createFlagWriter } from '../accounts/flags.ts';
import { MalformedRecord, SourceRecord } from '../accounts/source-record.ts';
import type { RecordWriter, RejectEvent } from '../accounts/writer.ts';
import { WriteResult, type Reject } from './results.ts';

/** Records in hand, or the path of an NDJSON file (one record per line) / a JSON array file. */
export type RecordSource = string | Iterable<unknown> | AsyncIterable<unknown>;

async function* ndjsonLines(path: string): AsyncGenerator<SourceRecord | MalformedRecord> {
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) {
    line += 1;
    if (text.trim() === '') continue;
    try {
      yield new SourceRecord(JSON.parse(text), { line });
    } catch {
      yield new MalformedRecord(text.slice(0, 200), { line }, `line ${line} is not valid JSON`);
    }
  }
}

async function* jsonArray(path: string): AsyncGenerator<SourceRecord> {
  const { readFile } = await import('node:fs/promises');
  const doc: unknown = JSON.parse(await readFile(path, 'utf8'));
  const list = Array.isArray(doc) ? doc : (doc as { accounts?: unknown[] } | null)?.accounts;
  if (!Array.isArray(list)) throw new TypeError(`${path} holds neither a JSON array nor {"accounts": [...]}`);
  for (let i = 0; i < list.length; i += 1) yield new SourceRecord(list[i], { element: i });
}

function recordsOf(source: RecordSource): Iterable<unknown> | AsyncIterable<unknown> {
  if (typeof source !== 'string') return source;
  return source.endsWith('.json') ? jsonArray(source) : ndjsonLines(source);
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
  const rejects: Reject[] = [];
  writer.on('reject', (event: RejectEvent) => rejects.push(toReject(event)));
  await pipeline(Readable.from(recordsOf(source), { objectMode: true }), writer);
  const { rejectedByReason, ...summary } = writer.summary;
  return new WriteResult({ ...summary, rejectedByReason }, rejects);
}

export function pushRecords(api: ServiceApi, source: RecordSource, opts: AccountWriterOptions = {}): Promise<WriteResult> {
  // Interactive pushes are small: send at once rather than wait for a quiet second.
  return run(createAccountWriter(api, { flushInterval: 50, ...opts }), source);
}

export function flagRecords(api: ServiceApi, source: RecordSource, opts: { signal?: AbortSignal } = {}): Promise<WriteResult> {
  return run(createFlagWriter(api, { flushInterval: 50, ...opts }), source);
}
