// Typed errors, one per documented error case (SPEC.md "Errors"). Every `message` is one plain
// sentence a user can act on, and none ever contains a password or token.

export interface LenderErrorDetails {
  /** HTTP status, when the error came from a response. */
  status?: number;
  /** The message the server sent, verbatim. */
  serverMessage?: string;
  /** The export endpoints' requestId, when the server sent one. */
  requestId?: string;
  cause?: unknown;
}

export class LenderError extends Error {
  override name = 'LenderError';
  readonly status: number | undefined;
  readonly serverMessage: string | undefined;
  readonly requestId: string | undefined;

  constructor(message: string, details: LenderErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.serverMessage = details.serverMessage;
    this.requestId = details.requestId;
  }

  /** Transient failures that the same request may survive when sent again. */
  get retryable(): boolean {
    return false;
  }
}

/** Bad options or configuration, found before any request. */
export class ConfigError extends LenderError {
  override name = 'ConfigError';
}

/** A URL that is not https:, refused before any I/O. */
export class InsecureUrlError extends ConfigError {
  override name = 'InsecureUrlError';
}

/** 401 at login: wrong email or password (or lender). */
export class AuthenticationError extends LenderError {
  override name = 'AuthenticationError';
}

/** The session cannot be renewed: the refresh token was refused and no password is at hand. */
export class SessionExpiredError extends AuthenticationError {
  override name = 'SessionExpiredError';
}

/** 403 Lender ID mismatch on an export endpoint. */
export class LenderMismatchError extends LenderError {
  override name = 'LenderMismatchError';
}

/** 404 Unknown section. */
export class UnknownSectionError extends LenderError {
  override name = 'UnknownSectionError';
}

/** 404 Unknown dataset (also a known dataset code under the wrong section). */
export class UnknownDatasetError extends LenderError {
  override name = 'UnknownDatasetError';
}

/** 404 for a dataset that is in the catalog with available false. */
export class DatasetUnavailableError extends LenderError {
  override name = 'DatasetUnavailableError';
  readonly dataset: string;
  constructor(dataset: string, message: string, details: LenderErrorDetails = {}) {
    super(message, details);
    this.dataset = dataset;
  }
}

export interface AccountFailure {
  accountId: string;
  errors: string[];
}

/** 400 from the account endpoints: the whole request was rejected; `failures` names the accounts. */
export class ValidationError extends LenderError {
  override name = 'ValidationError';
  readonly failures: AccountFailure[];
  constructor(message: string, failures: AccountFailure[], details: LenderErrorDetails = {}) {
    super(message, details);
    this.failures = failures;
  }
}

/** 5xx other than 504 (500 carries the server's message and requestId when given). */
export class ServerError extends LenderError {
  override name = 'ServerError';
  override get retryable(): boolean {
    return true;
  }
}

/** 504: the gateway gave up; for a large via dataset, read it in smaller windows. */
export class GatewayTimeoutError extends ServerError {
  override name = 'GatewayTimeoutError';
}

/** The connection failed or was reset before a full response arrived. */
export class NetworkError extends LenderError {
  override name = 'NetworkError';
  override get retryable(): boolean {
    return true;
  }
}

/** No response within the request timeout. */
export class RequestTimeoutError extends NetworkError {
  override name = 'RequestTimeoutError';
}

/** The response was not what the service documents: not JSON, truncated, or the wrong shape. */
export class ProtocolError extends LenderError {
  override name = 'ProtocolError';
}
