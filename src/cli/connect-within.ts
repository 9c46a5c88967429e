// Logging in for `lender push` and `lender flag` within the records' delivery deadline. The login
// is a request like the batches: giving up on it after the client's few attempts would lose every
// record of the run to one bad stretch of faults, which the batches themselves would ride out.
import { setTimeout as sleep } from 'node:timers/promises';
import { LenderError } from '../core/errors.ts';
import type { Connection } from '../connect.ts';

// Between rounds only; each round already backs off between the client's own attempts.
const MAX_PAUSE_MS = 2_000;

export async function connectWithin(
  deadlineMs: number, signal: AbortSignal, connectOnce: () => Promise<Connection>,
): Promise<Connection> {
  const started = Date.now();
  for (let round = 1; ; round++) {
    try {
      return await connectOnce();
    } catch (error) {
      if (!(error instanceof LenderError) || !error.retryable) throw error;
      // Stopped (Ctrl-C): say so, rather than report the failure it interrupted.
      signal.throwIfAborted();
      // Full jitter, so several runs started together do not come back together.
      const pauseMs = Math.floor(Math.random() * Math.min(MAX_PAUSE_MS, 200 * 2 ** round));
      if (Date.now() - started + pauseMs > deadlineMs) throw error;
      await sleep(pauseMs, undefined, { signal });
    }
  }
}
