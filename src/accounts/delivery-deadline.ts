// How long the writer keeps trying to deliver a batch. Upserts are safe to send again, so a batch
// is retried until a deadline (as a Kafka producer's delivery.timeout.ms) rather than for a fixed
// number of attempts, which a bad minute of faults can spend on one batch. A count can still bound
// each request as well (`retry.attempts`, `lender push --max-attempts`).
//
// The retries themselves are the client's (full-jitter backoff, Retry-After honoured): each
// request of a batch is handed a policy whose elapsed-time bound is what is left of the deadline.
import type { RetryPolicy } from '../core/api.ts';
import { parseDuration } from '../core/options.ts';

/** How long the writers try to deliver a batch unless `deliveryTimeoutMs` says otherwise: two minutes, Kafka's default delivery.timeout.ms. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 120_000;

// Not Infinity: the count stays a whole number for anything that checks it as one.
const UNBOUNDED_ATTEMPTS = Number.MAX_SAFE_INTEGER;

/** The option's value in milliseconds: at least 1, or Infinity for no deadline at all. */
export function deliveryTimeoutOption(value: number | undefined): number {
  if (value === undefined) return DEFAULT_DELIVERY_TIMEOUT_MS;
  if (value === Number.POSITIVE_INFINITY) return value;
  return parseDuration(value, 'deliveryTimeoutMs', { min: 1 });
}

/** The deadline of one batch, running from its first request. */
export class DeliveryDeadline {
  readonly #endsAt: number;
  readonly #now: () => number;

  constructor(timeoutMs: number, now: () => number = Date.now) {
    this.#now = now;
    this.#endsAt = now() + timeoutMs;
  }

  get remainingMs(): number {
    return Math.max(0, this.#endsAt - this.#now());
  }

  /**
   * The retry policy of the batch's next request: the writer's own (`base`), with attempts
   * unbounded unless it gives a count, and no retry waited for past the deadline. The request
   * itself is always sent once, even with nothing left: after a 400 the records it did not name
   * were never refused, and deserve one try.
   */
  policyFor(base: Partial<RetryPolicy> | undefined): Partial<RetryPolicy> {
    return {
      ...base,
      attempts: base?.attempts ?? UNBOUNDED_ATTEMPTS,
      maxElapsedMs: Math.min(base?.maxElapsedMs ?? Number.POSITIVE_INFINITY, this.remainingMs),
    };
  }
}
