// The HTTPS front of the sandbox: routes and authenticates on the headers, then reads a body only
// for a request it will serve, under a per-request limit and a budget shared by all requests;
// injects faults and writes every answer as JSON. Whatever a client sends, it answers and keeps
// serving; only TLS is spoken, so plain HTTP on the port gets no service at all.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ByteBudget } from './byte-budget.ts';
import { answerAndClose, encodeAnswer } from './close-unread.ts';
import { ConnectionGate } from './connection-gate.ts';
import type { Route, RouteAuth, RouteResponse, SandboxContext } from './contracts.ts';
import { applyLatency, faultResponse, faultsApply, pickFault, sendReset } from './faults.ts';
import { parseJsonBody } from './json-body.ts';
import { admitBody, bodyLimit, hasBody, readBody } from './read-body.ts';
import {
  badRequestTarget, busy, failure, invalidJson, methodNotAllowed, notFound, tooLarge,
} from './responses.ts';
import { authorize } from './route-auth.ts';
import type { Router } from './router.ts';
import type { TlsMaterial } from './tls.ts';
import type { TokenIssuer } from './tokens.ts';

export interface ServerDeps {
  readonly ctx: SandboxContext;
  readonly router: Router;
  readonly tokens: TokenIssuer;
  readonly tls: TlsMaterial;
  /** A route's own answer to a body that is not JSON (refresh answers problem details). */
  readonly invalidBody?: (route: Route, url: URL) => RouteResponse | undefined;
  /** Told about handler exceptions (answered 500) with the route as `METHOD pattern`; never
   * given request bodies or headers, which may hold credentials. */
  readonly onHandlerError?: (error: unknown, where: string) => void;
  /** Fault dice; injectable so tests need not depend on chance. */
  readonly random?: () => number;
}

export const ADMIN_PREFIX = '/__sandbox/';

/** Live load figures for /__sandbox/stats. */
export interface ServerLoad {
  connections: number;
  bufferedBytes: number;
  bufferedBytesPeak: number;
}

function encode(response: RouteResponse, requestId: string): { status: number; payload: Buffer } {
  try {
    return { status: response.status, payload: Buffer.from(JSON.stringify(response.body ?? null), 'utf8') };
  } catch {
    return { status: 500, payload: Buffer.from(JSON.stringify(failure('accounts', 500, requestId).body), 'utf8') };
  }
}

/** `application/json`, with or without parameters such as `charset=utf-8`. */
export function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && value.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

function send(res: ServerResponse, response: RouteResponse, requestId: string, extra: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const { status, payload } = encode(response, requestId);
  res.writeHead(status, {
    ...response.headers,
    ...extra,
    'content-type': 'application/json',
    'content-length': String(payload.length),
    'x-request-id': requestId,
  });
  res.end(payload);
}

export class SandboxServer {
  readonly server: https.Server;
  readonly #deps: ServerDeps;
  readonly #closing = new AbortController();
  readonly #gate: ConnectionGate;
  readonly #budget: ByteBudget;
  /** Answered by writing to the socket directly (see close-unread.ts): the ServerResponse must
   * never write after that. */
  readonly #answeredRaw = new WeakSet<ServerResponse>();

  constructor(deps: ServerDeps) {
    this.#deps = deps;
    const { options } = deps.ctx;
    this.#gate = new ConnectionGate(options.maxConnections);
    this.#budget = new ByteBudget(options.maxBufferedBytes);
    this.server = https.createServer({ key: deps.tls.key, cert: deps.tls.cert });
    // Past twice the limit even a 503 is not worth a TLS handshake: Node drops the connection.
    this.server.maxConnections = options.maxConnections * 2;
    this.server.on('secureConnection', (socket: TLSSocket) => this.#gate.admit(socket));
    const onRequest = (expectsContinue: boolean) => (req: IncomingMessage, res: ServerResponse) => {
      this.#handle(req, res, expectsContinue).catch((error: unknown) => {
        // #handle answers its own errors; this is the last line so a bug never kills the process.
        deps.onHandlerError?.(error, 'request handling');
        if (this.#answeredRaw.has(res)) return;
        if (!res.headersSent) send(res, failure('none', 500, 'unknown'), 'unknown');
        else res.destroy();
      });
    };
    this.server.on('request', onRequest(false));
    // With this listener Node no longer sends 100 Continue by itself: a request that is refused
    // on its headers is answered before the client sends its body at all.
    this.server.on('checkContinue', onRequest(true));
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => this.#clientError(error, socket));
    // Plain HTTP (or any non-TLS bytes) fails the handshake here: counted, never answered.
    this.server.on('tlsClientError', () => {
      deps.ctx.stats.tlsErrors = (deps.ctx.stats.tlsErrors ?? 0) + 1;
    });
  }

  async listen(port: number, host: string): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
    return this.server.address() as AddressInfo;
  }

  /** Stops accepting, ends waits on injected latency and closes keep-alive sockets too, so a
   * process (or a test file) using the sandbox can exit right after. */
  async close(): Promise<void> {
    this.#closing.abort();
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  load(): ServerLoad {
    return { connections: this.#gate.served, bufferedBytes: this.#budget.used, bufferedBytesPeak: this.#budget.peak };
  }

  async #handle(req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): Promise<void> {
    const { ctx, router } = this.#deps;
    const requestId = randomUUID();
    const method = req.method ?? 'GET';
    let url: URL;
    try {
      // Appended to an origin, not resolved against one: `//x/admin/…` resolved would make `x` a
      // host and serve `/admin/…`, a path the client never asked for.
      const target = req.url ?? '/';
      url = new URL(target.startsWith('/') ? `https://sandbox.invalid${target}` : 'https://sandbox.invalid/');
    } catch {
      url = new URL('https://sandbox.invalid/');
    }
    const admin = url.pathname.startsWith(ADMIN_PREFIX);
    if (!admin) ctx.stats.requests += 1;
    const answer = (response: RouteResponse, close = false): void => this.#answer(req, res, response, requestId, close);
    const refuseBusy = (auth: RouteAuth): void => {
      ctx.stats.overCapacity = (ctx.stats.overCapacity ?? 0) + 1;
      answer(busy(auth, requestId), true);
    };

    // Everything up to reading the body is decided on the headers, so a request that is refused
    // costs no body bytes, however many it announces.
    const match = router.match(method, url.pathname);
    if (this.#gate.isOverLimit(req.socket)) {
      return refuseBusy(match.kind === 'found' ? match.route.auth : match.kind === 'method-not-allowed' ? match.auth : 'none');
    }
    if (!req.url?.startsWith('/')) return answer(badRequestTarget());
    if (match.kind === 'not-found') return answer(notFound(method, url.pathname, requestId));
    if (match.kind === 'method-not-allowed') {
      return answer(methodNotAllowed(method, url.pathname, match.allowed, match.auth, requestId));
    }
    const found = match.route;

    let tenant;
    if (found.auth === 'accounts' || found.auth === 'export') {
      const outcome = authorize(found, match.params, req.headers, requestId, this.#deps.tokens, ctx);
      if ('response' in outcome) return answer(outcome.response);
      tenant = outcome.tenant;
    }

    // Only POST routes take a body; a GET's is never read (and its connection is closed after).
    let bytes: Buffer | undefined;
    let reservation;
    if (found.method === 'POST') {
      if (ctx.options.strict && found.auth !== 'admin' && !isJsonContentType(req.headers['content-type'])) {
        return answer(this.#deps.invalidBody?.(found, url) ?? invalidJson(found.auth, 'content-type'));
      }
      const limit = bodyLimit(found.auth, ctx.options.maxBodyBytes);
      const admission = admitBody(req.headers, limit, this.#budget);
      if (admission.kind === 'too-large') return answer(tooLarge(found.auth, limit, requestId), true);
      if (admission.kind === 'busy') return refuseBusy(found.auth);
      if (expectsContinue) res.writeContinue();
      const body = await readBody(req, limit, admission.reservation);
      if (body.kind === 'aborted') return;
      if (body.kind === 'too-large') return answer(tooLarge(found.auth, limit, requestId), true);
      if (body.kind === 'busy') return refuseBusy(found.auth);
      bytes = body.bytes;
      reservation = body.reservation;
    }

    try {
      // The injected latency is the service's time to answer, and the answer is worked out while
      // it runs, as a service with many backends works requests out side by side (one thread
      // working them out after their waits would queue them, a cost no real service adds). What
      // a request changes is committed only after it: a client that gives up meanwhile changed nothing.
      const latencyMs = faultsApply(found) ? ctx.faults.latencyMs : 0;
      const arrived = performance.now();

      let parsed: unknown;
      if (bytes !== undefined && bytes.length > 0) {
        const json = await parseJsonBody(bytes);
        bytes = undefined; // the parsed value replaces it; let the buffer go
        if (!json.ok) return answer(this.#deps.invalidBody?.(found, url) ?? invalidJson(found.auth, json.reason));
        parsed = json.value;
      }

      let response: RouteResponse;
      try {
        response = await found.handler({
          method, url, params: match.params, headers: req.headers, body: parsed, requestId,
          ...(tenant === undefined ? {} : { tenant }),
        });
      } catch (error) {
        this.#deps.onHandlerError?.(error, `${found.method} ${found.pattern}`);
        ctx.stats.handlerErrors = (ctx.stats.handlerErrors ?? 0) + 1;
        response = failure(found.auth, 500, requestId);
      }
      if (latencyMs > 0) {
        await applyLatency(latencyMs - (performance.now() - arrived), this.#closing.signal);
        if (res.destroyed) return;
      }

      // A fault stands in only for an answer that would have succeeded: a request the service
      // refuses (401, 400, 404) gets its refusal, and a faulted one is never applied.
      if (faultsApply(found) && response.status < 400) {
        const fault = pickFault(ctx.faults.faults, this.#deps.random);
        if (fault !== undefined) {
          ctx.stats.faultsInjected += 1;
          if (fault === 'reset') return sendReset(res);
          return answer(faultResponse(fault, found, requestId));
        }
      }
      response.commit?.();
      if (response.delayMs !== undefined) {
        await applyLatency(response.delayMs, this.#closing.signal);
        if (res.destroyed) return;
      }
      answer(response);
    } finally {
      reservation?.release();
    }
  }

  /** Sends `response`. While body bytes are still unread it is written straight to the socket,
   * which is then closed (close-unread.ts); `close` closes the connection in any case. */
  #answer(req: IncomingMessage, res: ServerResponse, response: RouteResponse, requestId: string, close: boolean): void {
    if (this.#answeredRaw.has(res) || res.headersSent || res.destroyed) return;
    const socket = req.socket;
    if (hasBody(req.headers) && !req.complete) {
      this.#answeredRaw.add(res);
      this.#gate.release(socket);
      const { status, payload } = encode(response, requestId);
      answerAndClose(socket, {
        status,
        headers: { ...response.headers, 'content-type': 'application/json', 'x-request-id': requestId },
        payload,
      });
      return;
    }
    if (close) this.#gate.release(socket);
    send(res, response, requestId, close ? { connection: 'close' } : {});
  }

  #clientError(error: NodeJS.ErrnoException, socket: Socket): void {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const payload = Buffer.from(JSON.stringify({ error: 'The request is not well-formed HTTP/1.1.' }));
    socket.end(encodeAnswer({ status, headers: { 'content-type': 'application/json' }, payload }));
  }
}
