// The HTTPS front of the sandbox: reads bodies under a size limit, routes, authenticates,
// injects faults and writes every answer as JSON. Whatever a client sends, it answers and
// keeps serving; only TLS is spoken, so plain HTTP on the port gets no service at all.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Route, RouteResponse, SandboxContext } from './contracts.ts';
import { applyLatency, faultResponse, faultsApply, pickFault, sendReset } from './faults.ts';
import {
  badRequestTarget, failure, invalidJson, methodNotAllowed, notFound, tooLarge,
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

type BodyResult = { readonly kind: 'ok'; readonly bytes: Buffer } | { readonly kind: 'too-large' } | { readonly kind: 'aborted' };

// Past the limit the rest of the body is read and dropped, so the client is not cut off
// mid-upload and can read the 413; past this much more, the connection is simply dropped.
const DISCARD_FACTOR = 4;

function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const declared = Number(req.headers['content-length'] ?? 0);
    let tooLarge = Number.isFinite(declared) && declared > limit;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
      else {
        chunks.length = 0;
        if (size > limit * DISCARD_FACTOR) req.destroy();
      }
    });
    req.on('end', () => resolve(tooLarge ? { kind: 'too-large' } : { kind: 'ok', bytes: Buffer.concat(chunks) }));
    req.on('error', () => resolve({ kind: 'aborted' }));
    req.on('close', () => {
      if (!req.complete) resolve({ kind: 'aborted' });
    });
  });
}

function send(res: ServerResponse, response: RouteResponse, requestId: string, extra: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  let payload: Buffer;
  let status = response.status;
  try {
    payload = Buffer.from(JSON.stringify(response.body ?? null), 'utf8');
  } catch {
    status = 500;
    payload = Buffer.from(JSON.stringify(failure('accounts', 500, requestId).body), 'utf8');
  }
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

  constructor(deps: ServerDeps) {
    this.#deps = deps;
    this.server = https.createServer({ key: deps.tls.key, cert: deps.tls.cert });
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.#handle(req, res).catch((error: unknown) => {
        // #handle answers its own errors; this is the last line so a bug never kills the process.
        deps.onHandlerError?.(error, 'request handling');
        if (!res.headersSent) send(res, failure('none', 500, 'unknown'), 'unknown');
        else res.destroy();
      });
    });
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

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { ctx, router } = this.#deps;
    const requestId = randomUUID();
    const method = req.method ?? 'GET';
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'https://sandbox.invalid');
    } catch {
      url = new URL('https://sandbox.invalid/');
    }
    const admin = url.pathname.startsWith(ADMIN_PREFIX);
    if (!admin) ctx.stats.requests += 1;

    const match = router.match(method, url.pathname);
    const route = match.kind === 'found' ? match.route : undefined;
    const auth = route?.auth ?? 'none';

    const body = await readBody(req, ctx.options.maxBodyBytes);
    if (body.kind === 'aborted') return;
    if (body.kind === 'too-large') {
      send(res, tooLarge(auth, ctx.options.maxBodyBytes, requestId), requestId, { connection: 'close' });
      return;
    }
    if (!req.url?.startsWith('/')) return send(res, badRequestTarget(), requestId);
    if (match.kind === 'not-found') return send(res, notFound(method, url.pathname), requestId);
    if (match.kind === 'method-not-allowed') {
      return send(res, methodNotAllowed(method, url.pathname, match.allowed, match.auth, requestId), requestId);
    }
    const found = match.route;

    if (faultsApply(found)) {
      await applyLatency(ctx.faults.latencyMs, this.#closing.signal);
      if (res.destroyed) return;
      const fault = pickFault(ctx.faults.faults, this.#deps.random);
      if (fault !== undefined) {
        ctx.stats.faultsInjected += 1;
        if (fault === 'reset') return sendReset(res);
        return send(res, faultResponse(fault, found, requestId), requestId);
      }
    }

    let parsed: unknown;
    // Export routes are GETs whose documented inputs are path and query only.
    if (found.auth !== 'export' && body.bytes.length > 0) {
      try {
        parsed = JSON.parse(body.bytes.toString('utf8'));
      } catch {
        return send(res, this.#deps.invalidBody?.(found, url) ?? invalidJson(found.auth), requestId);
      }
    }

    let tenant;
    if (found.auth === 'accounts' || found.auth === 'export') {
      const outcome = authorize(found, match.params, req.headers, requestId, this.#deps.tokens, ctx);
      if ('response' in outcome) return send(res, outcome.response, requestId);
      tenant = outcome.tenant;
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
    send(res, response, requestId);
  }

  #clientError(error: NodeJS.ErrnoException, socket: Socket): void {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const body = JSON.stringify({ error: 'The request is not well-formed HTTP/1.1.' });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
}
