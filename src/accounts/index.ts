// Public surface of the account streams: schemas, the writers, flags and record sources.
export {
  accountSchema,
  strictAccountSchema,
  phoneSchema,
  emailSchema,
  addressSchema,
  statusUpdateSchema,
  validateAccount,
  validateStatusUpdate,
  isMoneyString,
  isServiceDate,
  ACCOUNT_STATUS_MESSAGE,
  FLAG_STATUS_MESSAGE,
  type Account,
  type AccountInput,
  type StatusUpdate,
  type StatusUpdateInput,
  type Validation,
  type AccountValidationOptions,
} from './schema.ts';
export { normaliseAccount, normaliseStatusUpdate, toServiceDate, toDecimalString } from './normalise.ts';
export { isIsoAlpha3, ISO_ALPHA3 } from './countries.ts';
export {
  RecordWriter,
  type RecordWriterOptions,
  type RejectEvent,
  type RejectReason,
  type BatchEvent,
  type WriterSummary,
  type BufferState,
} from './writer.ts';
export { AccountWriter, createAccountWriter, type AccountWriterOptions } from './account-writer.ts';
export { DEFAULT_DELIVERY_TIMEOUT_MS } from './delivery-deadline.ts';
export { describeAnomaly, type AnomalyEvent } from './anomaly.ts';
export { FlagWriter, createFlagWriter, setFlags, type SetFlagsResult } from './flags.ts';
export { writeAll, type RecordsIn, type WriteAllOptions, type WriteAllResult } from './write-all.ts';
export { accountKind, statusUpdateKind, type RecordKind } from './record-kinds.ts';
export { SourceRecord, MalformedRecord, type SourcePosition } from './source-record.ts';
export { MAX_RECORD_DEPTH } from './nesting.ts';
export { readRecords, type ReadRecordsOptions } from './sources/read-records.ts';
export { readNdjson } from './sources/ndjson.ts';
export { readJson, JsonSourceError, type JsonErrorPosition } from './sources/json.ts';
export { detectFormat, type SourceFormat } from './sources/detect-format.ts';
