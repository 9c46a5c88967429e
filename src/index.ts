// The public API of lender-streams (package entry "."). Every name is listed here on purpose:
// docs/api-report.md shows the signatures and a test fails when the two disagree. Helpers used
// only inside the package or by its tests are imported from their own modules, never from here.
// The sandbox ("lender-streams/sandbox") and the REPL/notebook session ("lender-streams/session")
// are separate entries so that a pipeline importing the client never loads the service
// implementation or its certificate code.

// ---- client and configuration
export {
  LenderClient,
  type ClientOptions, type ClientStats, type LoginOptions, type ResumeOptions,
} from './client/client.ts';
export { version } from './core/version.ts';
export type { ConnectionOptions } from './client/config.ts';
export type {
  AccountsRequestOptions, RefreshEvent, RequestOptions, RetryEvent, RetryPolicy, ServiceApi,
} from './core/api.ts';
export { DEFAULT_RETRY_POLICY } from './core/retry.ts';
export type {
  AccountsAccepted, Catalog, CatalogDataset, CatalogSection, DatasetRef, ExportPageBody, ExportRow,
  LoginSession, PageMeta, PageQuery, Pagination,
} from './core/types.ts';

// ---- errors (every one a LenderError, except AbortError)
export {
  AbortError, AuthenticationError, CertificateError, ConfigError, DatasetUnavailableError,
  GatewayTimeoutError, InsecureUrlError, LenderError, LenderMismatchError, MissingCredentialsError,
  NetworkError, ProtocolError, RateLimitError, RequestTimeoutError, ServerError, SessionExpiredError,
  UnknownDatasetError, UnknownSectionError, ValidationError,
  type AccountFailure, type LenderErrorDetails,
} from './core/errors.ts';

// ---- static catalog (the documented one; availability comes from client.catalog())
export {
  DATASETS, DATASET_CODES, PAGE_MAX, SCHEMA_VERSION, SECTIONS, datasetInfo, isDatasetCode, sectionInfo,
  type CursorField, type DatasetCode, type DatasetInfo, type SectionCode, type SectionInfo, type TenantPathKind,
} from './core/catalog.ts';

// ---- export streams, NDJSON output, sync
export {
  exportPages, exportRows, ExportStream, toNdjson,
  type Checkpoint, type ExportOptions, type ExportPage, type ExportStats, type PageEvent, type WindowEvent,
  type SplitEvent, type TotalEvent, type Window, type WindowOption, type RowIdentity,
  SyncError, WindowTimeoutError,
} from './exports/index.ts';

// ---- sync into sinks: NDJSON files, DuckDB, PostgreSQL, your own
export {
  sync, ndjsonSink, duckdbSink, postgresSink, SinkError, DuckDbLockedError,
  type DatasetSyncSummary, type SyncOptions, type NdjsonSinkOptions, type DuckDbSink, type DuckDbSinkOptions, type PostgresSinkOptions,
  type Sink, type SinkDataset, type SinkNotice, type SinkPage,
} from './sinks/index.ts';
export type { DurationValue } from './core/options.ts';
export { FileError } from './core/file-errors.ts';

// ---- state stores (resume and incremental loads) and their lock
export {
  fileState, memoryState, StateLockedError,
  type DatasetState, type FileStateStore, type LoadPosition, type LoadProgress, type LoadRecord, type StateStore,
  type Windowing, type ValueMark, type LockHolder, type StateLock,
} from './exports/index.ts';

// ---- account and flag writers
export { createAccountWriter, AccountWriter, type AccountWriterOptions } from './accounts/account-writer.ts';
export { createFlagWriter, FlagWriter, setFlags, type SetFlagsResult } from './accounts/flags.ts';
export { writeAll, type RecordsIn, type WriteAllOptions, type WriteAllResult } from './accounts/write-all.ts';
export { DEFAULT_DELIVERY_TIMEOUT_MS } from './accounts/delivery-deadline.ts';
export type {
  BatchEvent, BufferState, RecordWriterOptions, RejectEvent, RejectReason, WriterSummary,
} from './accounts/writer.ts';
export type { AnomalyEvent } from './accounts/anomaly.ts';

// ---- record sources (files and streams of account or flag records)
export { readRecords, type ReadRecordsOptions } from './accounts/sources/read-records.ts';
export { readNdjson, type NdjsonOptions } from './accounts/sources/ndjson.ts';
export { readJson, JsonSourceError, type JsonErrorPosition } from './accounts/sources/json.ts';
export type { SourceFormat } from './accounts/sources/detect-format.ts';
export { SourceRecord, MalformedRecord, type SourcePosition } from './accounts/source-record.ts';

// ---- record schemas (what the writers validate before sending)
export {
  accountSchema, strictAccountSchema, statusUpdateSchema, validateAccount, validateStatusUpdate,
  type Account, type AccountInput, type AccountValidationOptions, type StatusUpdate, type StatusUpdateInput,
  type Validation,
} from './accounts/schema.ts';

// ---- the embedded sandbox, also startable from the main entry. Only its types are imported
// here and the implementation is loaded on the first call, so a pipeline importing the client
// still never loads the service or its certificate code; `lender-streams/sandbox` has the rest.
import type { Sandbox, SandboxOptions } from './sandbox/index.ts';
export type { Sandbox, SandboxCredentials, SandboxOptions } from './sandbox/index.ts';

/**
 * Starts the embedded sandbox (the whole service, in-process over HTTPS) for tests and offline
 * development; the same as `startSandbox` of `lender-streams/sandbox`, loaded on first use.
 */
export async function startSandbox(options?: SandboxOptions): Promise<Sandbox> {
  const sandbox = await import('./sandbox/index.ts');
  return sandbox.startSandbox(options);
}
