// Operational flags (the update-status endpoint): a writer for streams of status updates, and setFlags()
// for a list in hand. Both are the record writer on the status-update schema, so they share its
// guarantees: nothing invalid is sent, a 400 is split, every record is accounted for.
import type { ServiceApi } from '../core/api.ts';
import { checkOptionNames } from '../core/option-names.ts';
import { statusUpdateKind } from './record-kinds.ts';
import type { StatusUpdate, StatusUpdateInput } from './schema.ts';
import { numbered, writeAll, type WriteAllResult } from './write-all.ts';
import { RECORD_WRITER_OPTION_NAMES, RecordWriter, type RecordWriterOptions } from './writer.ts';

/** An object-mode Writable that sets disputed / do-not-contact flags with the account writer's guarantees; made by {@link createFlagWriter}. */
export class FlagWriter extends RecordWriter<StatusUpdate> {
  constructor(api: ServiceApi, opts: RecordWriterOptions = {}) {
    checkOptionNames(opts, RECORD_WRITER_OPTION_NAMES, 'the flag writer');
    super(api, statusUpdateKind(), opts);
  }
}

/** Streams flag records (status 5 disputed, 6 do-not-contact) to the service; the streaming form of {@link setFlags}. */
export function createFlagWriter(api: ServiceApi, opts: RecordWriterOptions = {}): FlagWriter {
  return new FlagWriter(api, opts);
}

/** The writer's summary, and every record not accepted with the reason and the service's or
 * the schema's messages. */
export type SetFlagsResult = WriteAllResult;

/** Validates the records, sends the valid ones and resolves once every one is accepted or
 * rejected. Rejections are in the result, not thrown; a failure of the writer itself (abort,
 * a bug) rejects the promise. */
export function setFlags(
  api: ServiceApi,
  records: Iterable<StatusUpdateInput | unknown> | AsyncIterable<StatusUpdateInput | unknown>,
  opts: RecordWriterOptions = {},
): Promise<SetFlagsResult> {
  return writeAll(createFlagWriter(api, opts), numbered(records));
}
