// Reads one request body under the per-request limit and the shared byte budget. Nothing is
// read when the declared length already says no; otherwise reading stops at the first chunk
// that passes either bound, and the rest of the body is left unread for the caller to refuse.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { ByteBudget, Reservation } from './byte-budget.ts';
import type { RouteAuth } from './contracts.ts';

export type BodyOutcome =
  /** `reservation` holds the body's bytes in the budget until the caller releases it. */
  | { readonly kind: 'ok'; readonly bytes: Buffer; readonly reservation: Reservation }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'busy' }
  | { readonly kind: 'aborted' };

/** Login, refresh and the admin endpoints take bodies of a few hundred bytes and need no token,
 * so anyone can send them: each may hold at most this much of the shared budget. */
export const SMALL_BODY_LIMIT = 64 * 1024;

/** The largest body a route of this kind reads. */
export function bodyLimit(auth: RouteAuth, maxBodyBytes: number): number {
  return auth === 'accounts' ? maxBodyBytes : Math.min(maxBodyBytes, SMALL_BODY_LIMIT);
}

/** The body length the headers promise: 0 for no body, undefined when it is sent chunked. */
export function declaredLength(headers: IncomingHttpHeaders): number | undefined {
  if (headers['transfer-encoding'] !== undefined) return undefined;
  const length = Number(headers['content-length'] ?? 0);
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/** Whether body bytes follow the headers (Node's parser accepts no other framing). */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  return declaredLength(headers) !== 0;
}

export type Admission =
  | { readonly kind: 'admitted'; readonly reservation: Reservation }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'busy' };

/** Decided from the headers alone, before any byte of the body is read: a declared length over
 * the limit is refused, and the budget must spare the declared length (0 when chunked). */
export function admitBody(headers: IncomingHttpHeaders, limit: number, budget: ByteBudget): Admission {
  const declared = declaredLength(headers);
  if (declared !== undefined && declared > limit) return { kind: 'too-large' };
  const reservation = budget.reserve(declared ?? 0);
  return reservation === undefined ? { kind: 'busy' } : { kind: 'admitted', reservation };
}

/** Reads the body into one Buffer under `reservation`, growing it for undeclared lengths. The
 * reservation is released here on every outcome but 'ok'. */
export function readBody(req: IncomingMessage, limit: number, reservation: Reservation): Promise<BodyOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (outcome: BodyOutcome): void => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      if (outcome.kind !== 'ok') {
        req.pause();
        chunks.length = 0;
        reservation.release();
      }
      resolve(outcome);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) return settle({ kind: 'too-large' });
      if (size > reservation.bytes && !reservation.grow(size - reservation.bytes)) return settle({ kind: 'busy' });
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => settle({ kind: 'ok', bytes: Buffer.concat(chunks, size), reservation }));
    req.once('error', () => settle({ kind: 'aborted' }));
    req.once('close', () => {
      if (!req.complete) settle({ kind: 'aborted' });
    });
  });
}
