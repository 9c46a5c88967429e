// The public API of lender-streams (package entry "."). The sandbox ("lender-streams/sandbox")
// and the REPL/notebook session ("lender-streams/session") are separate entries so that a
// pipeline importing the client never loads the service implementation or its certificate code.

// ---- client, configuration, errors
export {
  LenderClient, pageQueryString, version, userAgent,
  type ClientOptions, type ClientStats, type LoginOptions, type ResumeOptions,
} from './client/client.ts';
export { DEFAULT_RETRY_POLICY } from './client/retry.ts';
export type { RefreshEvent, RequestOptions, RetryEvent, RetryPolicy, ServiceApi } from './client/api.ts';
export {
  ENV, baseUrlOf, credentialsFilePath, normalizeAuthUrl, resolveConfig,
  type ConnectionOptions, type ResolvedConfig,
} from './client/config.ts';
export {
  AbortError, AuthenticationError, CertificateError, ConfigError, DatasetUnavailableError,
  GatewayTimeoutError, InsecureUrlError, LenderError, LenderMismatchError, MissingCredentialsError,
  NetworkError, ProtocolError, RequestTimeoutError, ServerError, SessionExpiredError,
  UnknownDatasetError, UnknownSectionError, ValidationError,
  type AccountFailure, type LenderErrorDetails,
} from './client/errors.ts';
export type {
  AccountsAccepted, Catalog, CatalogDataset, CatalogSection, DatasetRef, ExportPageBody, ExportRow,
  LoginSession, PageMeta, PageQuery, Pagination,
} from './client/types.ts';

// ---- static catalog (the documented one; availability comes from client.catalog())
export {
  DATASETS, DATASET_CODES, PAGE_MAX, SCHEMA_VERSION, SECTIONS, datasetInfo, isDatasetCode, sectionInfo,
  type CursorField, type DatasetCode, type DatasetInfo, type SectionCode, type SectionInfo, type TenantPathKind,
} from './catalog/datasets.ts';

// ---- export streams, state, sync
export * from './exports/index.ts';
export { ProgressLine, formatProgress, type ProgressFigures } from './progress.ts';

// ---- account streams and flags
export * from './accounts/index.ts';

// ---- the embedded sandbox, also importable from the main entry. Loaded on the first call
// (only types are imported here), so a pipeline importing the client still never loads the
// service implementation or its certificate code; `lender-streams/sandbox` has the rest.
import type { Sandbox, SandboxOptions } from './sandbox/index.ts';
export type { Sandbox, SandboxCredentials, SandboxOptions } from './sandbox/index.ts';
export async function startSandbox(options?: SandboxOptions): Promise<Sandbox> {
  const sandbox = await import('./sandbox/index.ts');
  return sandbox.startSandbox(options);
}
