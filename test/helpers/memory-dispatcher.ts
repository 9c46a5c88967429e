// An undici Dispatcher that answers from a function in this process instead of a socket, so a
// property test can drive the real client (transport, retries, token renewal, response parsing)
// through thousands of generated cases in seconds. The HTTPS suites cover the sockets.
import { Dispatcher } from 'undici';

export interface MemoryRequest {
  method: string;
  /** Path with query string. */
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

export interface MemoryResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A response, or 'reset': the connection closed before any answer. */
export type MemoryAnswer = MemoryResponse | 'reset';

function headerRecord(headers: Dispatcher.DispatchOptions['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined || headers === null) return out;
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) out[String(headers[i]).toLowerCase()] = String(headers[i + 1]);
    return out;
  }
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) if (v !== undefined) out[k.toLowerCase()] = String(v);
  return out;
}

export class MemoryDispatcher extends Dispatcher {
  readonly #serve: (req: MemoryRequest) => MemoryAnswer | Promise<MemoryAnswer>;

  constructor(serve: (req: MemoryRequest) => MemoryAnswer | Promise<MemoryAnswer>) {
    super();
    this.#serve = serve;
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    // The request API of undici 7 hands a handler of the callback style (onConnect .. onComplete).
    const h = handler as Required<Pick<Dispatcher.DispatchHandler, 'onConnect' | 'onHeaders' | 'onData' | 'onComplete' | 'onError'>>;
    let aborted = false;
    h.onConnect((reason?: Error) => {
      aborted = true;
      h.onError(reason ?? new Error('aborted'));
    });
    const req: MemoryRequest = {
      method: opts.method,
      path: opts.path,
      headers: headerRecord(opts.headers),
      body: typeof opts.body === 'string' ? opts.body : opts.body instanceof Buffer ? opts.body.toString('utf8') : undefined,
    };
    // Answered on a later turn of the event loop, as a socket would be.
    setImmediate(async () => {
      if (aborted) return;
      let answer: MemoryAnswer;
      try {
        answer = await this.#serve(req);
      } catch (error) {
        h.onError(error as Error);
        return;
      }
      if (aborted) return;
      if (answer === 'reset') {
        h.onError(Object.assign(new Error('other side closed'), { name: 'SocketError', code: 'UND_ERR_SOCKET' }));
        return;
      }
      const text = Buffer.from(JSON.stringify(answer.body));
      const headers = { 'content-type': 'application/json', 'content-length': String(text.length), ...answer.headers };
      const raw = Object.entries(headers).flatMap(([k, v]) => [Buffer.from(k), Buffer.from(v)]);
      h.onHeaders(answer.status, raw, () => undefined, '');
      h.onData(text);
      h.onComplete([]);
    });
    return true;
  }

  override async close(): Promise<void> {}

  override async destroy(): Promise<void> {}
}
