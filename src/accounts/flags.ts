// Operational flags (the update-status endpoint): a writer for streams of status updates, and setFlags()
// for a list in hand. Both are the record writer on the status-update schema, so they share its
// guarantees: nothing invalid is sent, a 400 is split, every record is accounted for.
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { ServiceApi } from '../client/api.ts';
import { statusUpdateKind } from './record-kinds.ts';
import type { StatusUpdate, StatusUpdateInput } from './schema.ts';
import { SourceRecord } from './source-record.ts';
import { RecordWriter, type RecordWriterOptions, type RejectEvent, type WriterSummary } from './writer.ts';

export class FlagWriter extends RecordWriter<StatusUpdate> {
  constructor(api: ServiceApi, opts: RecordWriterOptions = {}) {
    super(api, statusUpdateKind(), opts);
  }
}

export function createFlagWriter(api: ServiceApi, opts: RecordWriterOptions = {}): FlagWriter {
  return new FlagWriter(api, opts);
}

export interface SetFlagsResult extends WriterSummary {
  /** Every record not accepted, with the reason and the service's or the schema's messages. */
  rejects: RejectEvent[];
}

/** Validates the records, sends the valid ones and resolves once every one is accepted or
 * rejected. Rejections are in the result, not thrown; a failure of the writer itself (abort,
 * a bug) rejects the promise. */
export async function setFlags(
  api: ServiceApi,
  records: Iterable<StatusUpdateInput | unknown> | AsyncIterable<StatusUpdateInput | unknown>,
  opts: RecordWriterOptions = {},
): Promise<SetFlagsResult> {
  const writer = createFlagWriter(api, opts);
  const rejects: RejectEvent[] = [];
  writer.on('reject', (event: RejectEvent) => rejects.push(event));
  let element = 0;
  // Wrapped so a null in the list is a reject like any other (a stream cannot carry null), and so
  // each reject says which element it was.
  for await (const record of records) {
    if (!writer.write(new SourceRecord(record, { element: element++ }))) await once(writer, 'drain');
  }
  writer.end();
  await finished(writer);
  return { ...writer.summary, rejects };
}
