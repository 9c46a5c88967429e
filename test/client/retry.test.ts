import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RetryEvent } from '../../src/core/api.ts';
import {
  AbortError, AuthenticationError, CertificateError, GatewayTimeoutError, LenderMismatchError, NetworkError,
  RequestTimeoutError, ServerError, UnknownDatasetError, ValidationError,
} from '../../src/core/errors.ts';
import { backoffDelay, parseRetryAfter, resolvePolicy, withRetry } from '../../src/core/retry.ts';

const fast = resolvePolicy({ baseDelayMs: 1, maxDelayMs: 2, attempts: 4 });

describe('backoff', () => {
  it('draws full jitter under an exponential ceiling capped by maxDelayMs', () => {
    const policy = resolvePolicy({ baseDelayMs: 100, maxDelayMs: 1000 });
    assert.equal(backoffDelay(policy, 1, () => 0.999999), 99);
    assert.equal(backoffDelay(policy, 3, () => 0.999999), 399);
    assert.equal(backoffDelay(policy, 10, () => 0.5), 500);
    assert.equal(backoffDelay(policy, 2, () => 0), 0);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    assert.equal(parseRetryAfter('3'), 3000);
    assert.equal(parseRetryAfter(['2']), 2000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 00:00:05 GMT', now), 0);
    assert.equal(parseRetryAfter('soon'), undefined);
    assert.equal(parseRetryAfter(undefined), undefined);
  });
});

describe('withRetry', () => {
  it('retries 5xx, resets and timeouts until success, emitting one event per retry', async () => {
    const failures = [new ServerError('500', { status: 500 }), new NetworkError('reset'), new RequestTimeoutError('slow')];
    const events: RetryEvent[] = [];
    const result = await withRetry(fast, { method: 'GET', path: '/p', onRetry: (e) => events.push(e) }, async (n) => {
      const failure = failures[n - 1];
      if (failure) throw failure;
      return n;
    });
    assert.equal(result, 4);
    assert.deepEqual(events.map((e) => [e.attempt, e.error.name, e.path]), [
      [1, 'ServerError', '/p'], [2, 'NetworkError', '/p'], [3, 'RequestTimeoutError', '/p'],
    ]);
  });

  it('gives up after the configured attempts with the last error', async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(fast, { method: 'GET', path: '/p' }, async () => {
        calls += 1;
        throw new ServerError('boom', { status: 500 });
      }),
      ServerError,
    );
    assert.equal(calls, 4);
  });

  for (const error of [
    new ValidationError('400', []), new AuthenticationError('401', { status: 401 }), new LenderMismatchError('403'),
    new UnknownDatasetError('404'), new CertificateError('tls', 'SELF_SIGNED_CERT_IN_CHAIN'), new Error('bug'),
  ]) {
    it(`never retries ${error.name}`, async () => {
      let calls = 0;
      await assert.rejects(withRetry(fast, { method: 'GET', path: '/p' }, async () => {
        calls += 1;
        throw error;
      }));
      assert.equal(calls, 1);
    });
  }

  it('does not retry a 504 when retryGatewayTimeout is off', async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(resolvePolicy(fast, { retryGatewayTimeout: false }), { method: 'GET', path: '/p' }, async () => {
        calls += 1;
        throw new GatewayTimeoutError('504', { status: 504 });
      }),
      GatewayTimeoutError,
    );
    assert.equal(calls, 1);
  });

  it('honours Retry-After (capped by maxDelayMs) instead of the jitter', async () => {
    const events: RetryEvent[] = [];
    const policy = resolvePolicy({ baseDelayMs: 1, maxDelayMs: 30, attempts: 3 });
    await withRetry(policy, { method: 'GET', path: '/p', onRetry: (e) => events.push(e), random: () => 0 }, async (n) => {
      if (n === 1) throw new ServerError('503', { status: 503, retryAfterMs: 20 });
      if (n === 2) throw new ServerError('503', { status: 503, retryAfterMs: 120_000 });
      return n;
    });
    assert.deepEqual(events.map((e) => e.delayMs), [20, 30]);
  });

  it('stops when the next wait would pass maxElapsedMs', async () => {
    let clock = 0;
    let calls = 0;
    const policy = resolvePolicy({ attempts: 10, baseDelayMs: 10, maxDelayMs: 10, maxElapsedMs: 25 });
    await assert.rejects(
      withRetry(policy, { method: 'GET', path: '/p', now: () => clock, random: () => 0.99 }, async () => {
        calls += 1;
        clock += 6;
        throw new ServerError('500', { status: 500 });
      }),
      ServerError,
    );
    // Elapsed before each wait: 6, 12, 18; with a 9 ms wait the third would end at 27 > 25.
    assert.equal(calls, 3);
  });

  it('rejects promptly with an AbortError when aborted during a backoff wait', async () => {
    const controller = new AbortController();
    const policy = resolvePolicy({ baseDelayMs: 60_000, maxDelayMs: 60_000, maxElapsedMs: 600_000, attempts: 3 });
    const pending = withRetry(policy, { method: 'GET', path: '/p', signal: controller.signal, random: () => 1 }, async () => {
      setImmediate(() => controller.abort());
      throw new ServerError('500', { status: 500 });
    });
    await assert.rejects(pending, AbortError);
  });
});
