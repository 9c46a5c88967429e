// Retries with exponential backoff and full jitter (delay drawn from [0, min(max, base * 2^n)]),
// bounded by attempts and total time. Only errors that say they are retryable are retried:
// 5xx, 429, connection resets and timeouts; never other 4xx, certificate failures or an abort.
import { setTimeout as sleep } from 'node:timers/promises';
import type { RetryEvent, RetryPolicy } from './api.ts';
import { GatewayTimeoutError, LenderError } from './errors.ts';
import { abortErrorFrom } from './abort.ts';

/** The retry policy used unless a client or a call overrides it: 5 attempts, backoff from 200 ms up to 10 s, at most 60 s in all. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  attempts: 5,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  maxElapsedMs: 60_000,
  retryGatewayTimeout: true,
});

export function resolvePolicy(...layers: (Partial<RetryPolicy> | undefined)[]): RetryPolicy {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY };
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const [key, value] of Object.entries(layer) as [keyof RetryPolicy, never][]) {
      if (value !== undefined) policy[key] = value;
    }
  }
  policy.attempts = Math.max(1, Math.floor(policy.attempts));
  return policy;
}

/** Full-jitter delay before retry number `retry` (1 for the first retry). */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.floor(random() * Math.max(0, ceiling));
}

/**
 * Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 10.2.3). Undefined when
 * absent or unreadable, so the jittered backoff applies instead.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

function shouldRetry(error: unknown, policy: RetryPolicy): error is LenderError {
  if (!(error instanceof LenderError) || !error.retryable) return false;
  if (error instanceof GatewayTimeoutError && !policy.retryGatewayTimeout) return false;
  return true;
}

export interface RetryContext {
  method: string;
  path: string;
  signal?: AbortSignal | undefined;
  onRetry?: (event: RetryEvent) => void;
  random?: () => number;
  now?: () => number;
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, or the policy is spent.
 * A Retry-After from the server replaces the jittered delay, capped at maxDelayMs so a
 * misbehaving header cannot park a load for hours. A wait that would end past maxElapsedMs is
 * not started: the last error is thrown instead.
 */
export async function withRetry<T>(policy: RetryPolicy, ctx: RetryContext, attempt: (n: number) => Promise<T>): Promise<T> {
  const now = ctx.now ?? Date.now;
  const started = now();
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (ctx.signal?.aborted) throw abortErrorFrom(ctx.signal);
      if (!shouldRetry(error, policy) || n >= policy.attempts) throw error;
      const delayMs = error.retryAfterMs !== undefined
        ? Math.min(error.retryAfterMs, policy.maxDelayMs)
        : backoffDelay(policy, n, ctx.random);
      if (now() - started + delayMs > policy.maxElapsedMs) throw error;
      ctx.onRetry?.({ attempt: n, delayMs, error, method: ctx.method, path: ctx.path });
      if (delayMs > 0) {
        try {
          await sleep(delayMs, undefined, ctx.signal === undefined ? undefined : { signal: ctx.signal });
        } catch {
          throw abortErrorFrom(ctx.signal!);
        }
      }
    }
  }
}
