// HTTPS transport on undici: one keep-alive agent (a pool per origin), the caller's extra CA
// trusted through the connector, certificate checks always on. Every failure leaves here as a
// LenderError or an AbortError; undici's own errors never escape, because some carry request
// headers (and so the bearer token).
import { readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import type { buildConnector as BuildConnector, Dispatcher } from 'undici';
import { Socket as NetSocket } from 'node:net';
import { CertificateError, ConfigError, InsecureUrlError, NetworkError, RequestTimeoutError } from './errors.ts';
import { abortErrorFrom } from './abort.ts';
import { Agent, buildConnector } from './undici-agent.ts';
import { userAgent } from './version.ts';

/** The key of TransportOptions' test-only dispatcher; not exported from the package. */
export const inMemoryService = Symbol('lender-streams in-memory service');

export interface TransportOptions {
  /** Extra trusted CA certificate(s), PEM, trusted besides Node's defaults (see trustedCas). */
  ca?: string | Buffer | undefined;
  /** Time allowed for one request, headers and body together. Default 30 s. */
  timeoutMs?: number;
  /** Sockets per origin. Default 16. */
  connections?: number;
  /** Idle time before a kept-alive socket is closed. Default 10 s. */
  keepAliveTimeoutMs?: number;
  /**
   * Tests only: answer every request from this undici dispatcher (an in-memory service) instead
   * of the network. Kept out of the public options on purpose: a dispatcher brings its own TLS
   * settings, which the certificate checks of the transport's own agent could not vouch for.
   */
  [inMemoryService]?: Dispatcher;
}

/** A request body that is JSON already, as text or UTF-8 bytes: sent verbatim, not serialised again. */
export class RawJsonBody {
  constructor(readonly json: string | Buffer) {}

  /**
   * `{"<field>":[<texts joined by commas>]}`, each text encoded once, straight into one buffer.
   * Joining the texts into one string, which undici then encodes again, cost some ten times as
   * much: 0.7 µs a record of about 450 bytes, against 0.07.
   */
  static ofArray(field: string, texts: readonly string[]): RawJsonBody {
    const head = `{${JSON.stringify(field)}:[`;
    let size = Buffer.byteLength(head) + 2 + Math.max(texts.length - 1, 0);
    for (const text of texts) size += Buffer.byteLength(text);
    const bytes = Buffer.allocUnsafe(size);
    let at = bytes.write(head, 0);
    for (let i = 0; i < texts.length; i++) {
      if (i > 0) bytes[at++] = 0x2c; // ,
      at += bytes.write(texts[i]!, at);
    }
    bytes.write(']}', at);
    return new RawJsonBody(bytes);
  }
}

export interface TransportRequest {
  method: 'GET' | 'POST';
  /** Absolute https URL. */
  url: string;
  /** Serialised as JSON when present; a RawJsonBody is sent as it is. */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The whole body as text. */
  text: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;

// Node's TLS verification failures: retrying cannot fix any of them.
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED', 'CERT_REJECTED', 'CERT_SIGNATURE_FAILURE', 'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH', 'INVALID_CA', 'UNABLE_TO_DECRYPT_CERT_SIGNATURE', 'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
]);

/** Refuses any URL that is not https:, before a socket is opened: the one check behind both the
 * configuration (normalizeAuthUrl) and every request the transport sends. */
export function assertHttps(url: URL): void {
  if (url.protocol !== 'https:') {
    throw new InsecureUrlError(
      `The auth URL ${url.protocol}//${url.host} is refused because the service requires HTTPS: ` +
        'over plain HTTP the password and tokens would travel in clear text. Use an https:// URL.',
    );
  }
}

export class Transport {
  readonly #agent: Dispatcher;
  readonly #timeoutMs: number;
  /** HTTP requests handed to the network, for client.stats. */
  sent = 0;
  /** Requests given up after an abort whose undici side has not settled yet. */
  readonly #abandoned = new Set<Promise<unknown>>();
  /** Requests whose caller still waits for them (not the abandoned ones). */
  readonly #inFlight = new Set<Promise<TransportResponse>>();
  /** Every socket this transport's agent opened and that is not closed yet. */
  readonly #sockets = new Set<NetSocket>();

  constructor(options: TransportOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#agent = options[inMemoryService] ?? new Agent({
      connections: options.connections ?? 16,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
      // The overall timer below is the real limit; these only stop a socket idling forever.
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
      // Explicit: Node's default for this option comes from an environment variable that can
      // turn verification off for the whole process; an explicit true cannot be. An added CA
      // goes in one secure context made here (contextTrusting): given as `ca`, every new
      // connection would build its trust store again.
      connect: this.#tracked(buildConnector({
        rejectUnauthorized: true,
        ...(options.ca === undefined ? {} : { secureContext: contextTrusting(options.ca) }),
      })),
    });
  }

  async request(req: TransportRequest): Promise<TransportResponse> {
    const sending = this.#send(req);
    this.#inFlight.add(sending);
    try {
      return await sending;
    } finally {
      this.#inFlight.delete(sending);
    }
  }

  async #send(req: TransportRequest): Promise<TransportResponse> {
    const url = new URL(req.url);
    // Checked here as well as in config so no code path can send a token over plain HTTP.
    assertHttps(url);
    if (req.signal?.aborted) throw abortErrorFrom(req.signal);
    const body = req.body === undefined ? undefined : req.body instanceof RawJsonBody ? req.body.json : serialise(req.body);

    const timeoutMs = req.timeoutMs ?? this.#timeoutMs;
    // One controller fed by the timer and the caller's signal. Not AbortSignal.any: a CLI run
    // passes one long-lived signal to thousands of requests, and the listener is removed below.
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const signal = controller.signal;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': userAgent,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...req.headers,
    };
    try {
      this.sent += 1;
      const res = await this.#settledOrAborted(this.#agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: req.method,
        headers,
        body,
        signal,
      }), signal);
      // Read fully before returning: a reset mid-body must fail this request, not a later parse.
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers, text };
    } catch (error) {
      if (req.signal?.aborted) throw abortErrorFrom(req.signal);
      if (timedOut) {
        throw new RequestTimeoutError(
          `No complete response from ${url.host} within ${timeoutMs} ms; the service may be slow or unreachable.`,
        );
      }
      throw networkErrorFrom(error, url);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * The response, or a rejection as soon as `signal` aborts. undici leaves a request waiting for
   * its connection (a TLS handshake a host never answers) until its own connect timeout, ten
   * seconds on, whatever its signal says; Ctrl-C and the overall timer must not wait that long.
   * The request left behind is kept until it settles (its body discarded, its error dropped), so
   * that close() knows not to wait for it.
   */
  #settledOrAborted(pending: Promise<Dispatcher.ResponseData>, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        reject(signal.reason);
        const left = pending.then((res) => res.body.destroy(), () => undefined);
        this.#abandoned.add(left);
        void left.finally(() => this.#abandoned.delete(left));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** The connector, keeping each socket it opens until it closes, for close(). */
  #tracked(connector: BuildConnector.connector): BuildConnector.connector {
    return (opts, callback) => {
      // undici's connector returns the socket it is connecting (its types say void): kept if so.
      const socket: unknown = connector(opts, callback);
      if (socket instanceof NetSocket) {
        this.#sockets.add(socket);
        socket.once('close', () => this.#sockets.delete(socket));
      }
      return socket as void;
    };
  }

  /** Waits for requests in flight, but not for one abandoned after an abort: once the others
   * have ended, what undici still holds for it (a connection in its handshake, left to undici's
   * connect timeout) is dropped, or the process would live on until that timeout. */
  async close(): Promise<void> {
    // undici refuses new requests from here on, and would wait for the abandoned ones too.
    const closing = this.#agent.close();
    await Promise.allSettled([...this.#inFlight]);
    if (this.#abandoned.size === 0) return closing;
    // Destroyed, the agent never settles the close begun above: not waited for.
    closing.catch(() => undefined);
    for (const socket of this.#sockets) socket.destroy();
    await this.#agent.destroy();
  }
}

/**
 * A secure context trusting `extra` besides Node's default roots. Node's `ca` option replaces
 * the default trust store rather than adding to it, so on its own it would make every publicly
 * certified host (and any CA of NODE_EXTRA_CA_CERTS, a corporate proxy's say) fail verification.
 * The default context starts from Node's bundled roots (parsed once per process); the CAs are
 * added to this context's own copy of that store, which leaves every other context's trust
 * unchanged. That copy lacks NODE_EXTRA_CA_CERTS on Node 20, so its file is added too (a
 * certificate already there is ignored). Passing the roots again as text instead
 * (`ca: [...rootCertificates, extra]`) parsed some 140 PEM certificates: ~40 ms of CPU per client.
 */
function contextTrusting(extra: string | Buffer, env: NodeJS.ProcessEnv = process.env): SecureContext {
  const cas: (string | Buffer)[] = [];
  const extraFile = env.NODE_EXTRA_CA_CERTS;
  if (extraFile) {
    try {
      cas.push(readFileSync(extraFile, 'utf8'));
    } catch {
      // Node warned about an unreadable NODE_EXTRA_CA_CERTS at start and went on without it.
    }
  }
  cas.push(extra);
  const context = createSecureContext();
  // `context.context` is the native context Node's own `ca` option adds to: not documented,
  // so a Node without it gets the roots as text instead, the slower way.
  const store = context.context as { addCACert?: (cert: string | Buffer) => void } | undefined;
  if (typeof store?.addCACert !== 'function') return createSecureContext({ ca: [...rootCertificates, ...cas] });
  for (const ca of cas) store.addCACert(ca);
  return context;
}

function serialise(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw new ConfigError(`The request body cannot be sent as JSON (${(error as Error).message}).`);
  }
}

/** The code of an error or of the first error in its cause chain that has one. */
function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET' && code !== 'UND_ERR_CONNECT') return code;
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A NetworkError that keeps only the failure's name, code and message as its cause. The
 * original undici error is dropped on purpose: it may hold the request's headers or socket.
 */
function networkErrorFrom(error: unknown, url: URL): NetworkError {
  const code = errorCode(error);
  const original = error instanceof Error ? error : undefined;
  const cause = new Error(original?.message ?? String(error));
  cause.name = original?.name ?? 'Error';
  if (code !== undefined) (cause as Error & { code?: string }).code = code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new RequestTimeoutError(`No complete response from ${url.host} in time (${code}); the service may be slow or unreachable.`, { cause });
  }
  if (code !== undefined && CERTIFICATE_CODES.has(code)) {
    return new CertificateError(
      `The TLS certificate of ${url.host} could not be verified (${code}); if it is the sandbox or uses a private CA, ` +
        'trust that CA with --ca-file, LENDER_CA_FILE or the ca option.',
      code,
      { cause },
    );
  }
  const what = code === 'ECONNREFUSED' ? 'the connection was refused'
    : code === 'ENOTFOUND' ? 'the host name could not be resolved'
    : code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || original?.name === 'SocketError' ? 'the connection was closed before a full response arrived'
    : `the connection failed${code ? ` (${code})` : ''}`;
  return new NetworkError(`Could not reach ${url.host}: ${what}.`, { cause });
}
