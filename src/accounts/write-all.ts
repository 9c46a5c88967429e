// writeAll(): a record writer fed from a source until every record is accepted or rejected. How
// setFlags(), the session's push()/flag(), `lender push`/`lender flag` and the demo drive one.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SourceRecord } from './source-record.ts';
import type { RecordWriter, RejectEvent, WriterSummary } from './writer.ts';

/** Records for {@link writeAll}: an array or any (async) iterable, such as `readRecords(...)`. */
export type RecordsIn = Iterable<unknown> | AsyncIterable<unknown>;

/** What {@link writeAll} and {@link setFlags} resolve with: the writer's summary and its rejects. */
export interface WriteAllResult extends WriterSummary {
  /** Every record not accepted, in the order rejected (empty with keepRejects: false). */
  rejects: RejectEvent[];
}

/** Options of {@link writeAll}. */
export interface WriteAllOptions {
  /** Keep each reject in the result. Default true; false for runs too long to hold them all,
   * whose caller takes the writer's 'reject' events instead. */
  keepRejects?: boolean;
}

/**
 * Writes every record of `source`, ends the writer and resolves with its summary once it has
 * finished. Rejections are in the result, not thrown; a failure of the source or of the writer
 * itself (abort, a bug) rejects the promise, and each stops the other.
 */
export async function writeAll<T>(writer: RecordWriter<T>, source: RecordsIn, opts: WriteAllOptions = {}): Promise<WriteAllResult> {
  const rejects: RejectEvent[] = [];
  if (opts.keepRejects ?? true) writer.on('reject', (event: RejectEvent) => rejects.push(event));
  await pipeline(Readable.from(source, { objectMode: true }), writer);
  return { ...writer.summary, rejects };
}

/** The elements of a list in hand, numbered so a reject names its element, and so a null is a
 * reject like any other value (a stream cannot carry null). */
export async function* numbered(records: RecordsIn): AsyncGenerator<SourceRecord> {
  let element = 0;
  for await (const record of records) yield new SourceRecord(record, { element: element++ });
}
