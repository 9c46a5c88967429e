// Typed errors, one per documented error case (docs/service-contract.md). Every `message` is one plain
// sentence a user can act on, and none ever contains a password or token.
import { redactText } from './redact.ts';

/** What a {@link LenderError} carries besides its message: the response's status, the server's text and request id, and the cause. */
export interface LenderErrorDetails {
  /** HTTP status, when the error came from a response. */
  status?: number;
  /** The message the server sent, verbatim except for anything that looks like a credential. */
  serverMessage?: string;
  /** The export endpoints' requestId, when the server sent one. */
  requestId?: string;
  /** Delay the server asked for in Retry-After, already converted to milliseconds. */
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * The base of every error the library throws for a failed call (except {@link AbortError}): catch it
 * to handle any service failure, or a subclass for one case. Its message is one sentence and never holds a secret.
 */
export class LenderError extends Error {
  override name = 'LenderError';
  readonly status: number | undefined;
  readonly serverMessage: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;

  // Whatever built the error, server text in it is scrubbed here: a bearer token or JWT never
  // reaches a message, a field or a cause. The client also cuts its token session's secrets out
  // (redactError) before an error leaves it.
  constructor(message: string, details: LenderErrorDetails = {}) {
    super(redactText(message), details.cause === undefined ? undefined : { cause: safeCause(details.cause) });
    this.status = details.status;
    this.serverMessage = optionalText(details.serverMessage);
    this.requestId = optionalText(details.requestId);
    this.retryAfterMs = details.retryAfterMs;
  }

  /** Transient failures that the same request may survive when sent again. */
  get retryable(): boolean {
    return false;
  }
}

/** util.inspect, loaded when first needed: every `lender` start loads this module, and an ESM import of node:util costs about 2 ms on Node 24. */
function inspectValue(value: object): string {
  return process.getBuiltinModule('node:util').inspect(value, { depth: 2, breakLength: Infinity });
}

function optionalText(text: string | undefined): string | undefined {
  return text === undefined ? undefined : redactText(text);
}

/**
 * A cause fit to keep: LenderErrors as they are (scrubbed when made); any other error becomes a
 * copy holding only its name, code, message, stack and cause, scrubbed, because errors of
 * libraries (undici's, say) may carry the request's headers.
 */
function safeCause(cause: unknown, depth = 0): unknown {
  if (cause instanceof LenderError) return cause;
  if (typeof cause === 'string') return redactText(cause);
  if (!(cause instanceof Error)) {
    return cause === null || typeof cause !== 'object' ? cause : redactText(inspectValue(cause));
  }
  const copy = new Error(redactText(cause.message));
  copy.name = cause.name;
  copy.stack = redactText(cause.stack ?? `${cause.name}: ${cause.message}`);
  const code = (cause as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') (copy as Error & { code?: unknown }).code = code;
  if (cause.cause !== undefined && depth < 4) copy.cause = safeCause(cause.cause, depth + 1);
  return copy;
}

/** Bad options or configuration, found before any request. */
export class ConfigError extends LenderError {
  override name = 'ConfigError';
}

/** No complete set of credentials in the options, the environment or the credentials file. */
export class MissingCredentialsError extends ConfigError {
  override name = 'MissingCredentialsError';
  /** The environment variables that were not found. */
  readonly missing: readonly string[];
  constructor(message: string, missing: readonly string[], details: LenderErrorDetails = {}) {
    super(message, details);
    this.missing = missing;
  }
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
    this.dataset = redactText(dataset);
  }
}

/** One account the service named in a 400 from the account endpoints, with its error messages. */
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
    // The service's per-account texts are server words like any other.
    this.failures = failures.map((f) => ({ accountId: redactText(f.accountId), errors: f.errors.map((e) => redactText(e)) }));
  }
}

/** 5xx other than 504 (500 carries the server's message and requestId when given). */
export class ServerError extends LenderError {
  override name = 'ServerError';
  override get retryable(): boolean {
    return true;
  }
}

/** 429: too many requests for now. The service documents no rate limit, but a gateway in front
 * of it may answer so; the request was not processed, and its Retry-After is honoured. */
export class RateLimitError extends LenderError {
  override name = 'RateLimitError';
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

/** The server's TLS certificate failed verification. Sending the request again cannot help,
 * so unlike other network errors it is not retried. */
export class CertificateError extends NetworkError {
  override name = 'CertificateError';
  /** The TLS error code from Node, e.g. SELF_SIGNED_CERT_IN_CHAIN. */
  readonly code: string | undefined;
  constructor(message: string, code: string | undefined, details: LenderErrorDetails = {}) {
    super(message, details);
    this.code = code;
  }
  override get retryable(): boolean {
    return false;
  }
}

/** The caller's AbortSignal fired. Deliberately not a LenderError: it is the caller's decision,
 * not a failure of the service, and it follows Node's own AbortError (name and code). */
export class AbortError extends Error {
  override name = 'AbortError';
  readonly code = 'ABORT_ERR';
  constructor(message = 'The operation was aborted.', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The response was not what the service documents: not JSON, truncated, or the wrong shape. */
export class ProtocolError extends LenderError {
  override name = 'ProtocolError';
}

/** The first line of an error's message: the rest (a query excerpt, hints) stays in the error. */
export function firstLineOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n', 1)[0]!.trim();
}
