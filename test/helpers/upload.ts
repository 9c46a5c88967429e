// Uploads over node:https whose body the test sends piece by piece, to see what the sandbox
// answers before, during or after it: an answer that arrives while the body is unfinished can
// only come from a server that did not wait for (or buffer) it.
import https from 'node:https';
import type { ClientRequest, IncomingHttpHeaders } from 'node:http';

export interface UploadAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** Parsed JSON, or undefined. */
  readonly body: any;
  /** Body bytes the client had handed to its socket when the answer's headers arrived. */
  readonly sentBeforeAnswer: number;
}

export interface UploadOptions {
  readonly origin: string;
  readonly ca: string;
  readonly method?: string;
  readonly path: string;
  readonly token?: string;
  /** Declared as Content-Length; without it the body goes chunked. */
  readonly contentLength?: number;
  readonly headers?: Record<string, string>;
}

export interface Upload {
  /** Writes `bytes`, resolving once the socket takes them (or at once if the request is over). */
  write(bytes: Buffer): Promise<void>;
  end(bytes?: Buffer): void;
  /** The answer, body read to its end. Rejects on a socket error before the answer's end. */
  readonly answer: Promise<UploadAnswer>;
  /** Bytes written so far. */
  readonly sent: number;
  /** The underlying request, for its events ('continue'). */
  readonly request: ClientRequest;
  destroy(): void;
}

export function openUpload(options: UploadOptions): Upload {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.contentLength !== undefined) headers['content-length'] = String(options.contentLength);
  const req = https.request(`${options.origin}${options.path}`, {
    method: options.method ?? 'POST', ca: options.ca, headers, agent: false,
  });
  let sent = 0;
  let over = false;
  const answer = new Promise<UploadAnswer>((resolve, reject) => {
    req.once('response', (res) => {
      const sentBeforeAnswer = sent;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => {
        over = true;
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body, sentBeforeAnswer });
      });
      res.once('error', reject);
    });
    req.once('error', (error) => {
      over = true;
      reject(error);
    });
  });
  // An error after the answer (the server closing a connection whose body it refused) is expected.
  answer.catch(() => undefined);
  return {
    write(bytes) {
      if (over || req.destroyed) return Promise.resolve();
      sent += bytes.length;
      return new Promise((resolve) => {
        if (req.write(bytes)) resolve();
        else {
          const done = () => {
            req.off('drain', done);
            req.off('close', done);
            resolve();
          };
          req.once('drain', done);
          req.once('close', done);
        }
      });
    },
    end(bytes) {
      if (bytes !== undefined) sent += bytes.length;
      req.end(bytes);
    },
    answer,
    get sent() {
      return sent;
    },
    request: req,
    destroy() {
      over = true;
      req.destroy();
    },
  };
}

/** Writes `total` bytes of `fill` in 64 KiB pieces until done or until the answer arrives, then
 * destroys the request (as a client does once it has its answer) and returns the answer. */
export async function uploadUntilAnswered(upload: Upload, total: number, fill = 0x20): Promise<UploadAnswer> {
  const piece = Buffer.alloc(64 * 1024, fill);
  let answered = false;
  const answer = upload.answer.finally(() => {
    answered = true;
  });
  const writing = (async () => {
    for (let sent = 0; sent < total && !answered; sent += piece.length) {
      await upload.write(sent + piece.length <= total ? piece : piece.subarray(0, total - sent));
    }
    if (!answered) upload.end();
  })();
  try {
    return await answer;
  } finally {
    upload.destroy();
    await writing;
  }
}

/** Rejects after `ms` with `message`; for awaiting answers that today's bugs never send. */
export function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Polls `read` until it returns `want` (or fails after `ms`). */
export async function until<T>(read: () => T, want: T, ms = 5000, what = 'value'): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = read();
    if (got === want) return;
    if (Date.now() > deadline) throw new Error(`${what} stayed ${String(got)}, expected ${String(want)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
