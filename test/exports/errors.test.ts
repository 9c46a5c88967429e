// The export streams' own errors: what they tell a caller about retrying.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayTimeoutError } from '../../src/core/errors.ts';
import { withRetry } from '../../src/core/retry.ts';
import { WindowTimeoutError } from '../../src/exports/errors.ts';

const WINDOW = { since: '2026-01-01T00:00:00.000Z', until: '2026-01-01T01:00:00.000Z' };
const FAST = { attempts: 3, baseDelayMs: 0, maxDelayMs: 0, maxElapsedMs: 1_000, retryGatewayTimeout: true };

describe('WindowTimeoutError', () => {
  it('is a 504 that is not retryable: the client already retried it at the minimum span', () => {
    const error = new WindowTimeoutError('D23', WINDOW, 3_600_000, { status: 504 });
    assert.ok(error instanceof GatewayTimeoutError);
    assert.equal(error.status, 504);
    assert.equal(error.retryable, false);
    assert.equal(new GatewayTimeoutError('504', { status: 504 }).retryable, true, 'a plain 504 still is');
    assert.match(error.message, /span of 1 hour; retry later, or pass a smaller minSplitSpan \(--min-split in the CLI\)\.$/);
  });

  it('gives its span in a readable unit, and for a direct dataset also the limit as advice', () => {
    // A via read costs the service its whole window whatever the limit: only a shorter window helps there.
    assert.match(new WindowTimeoutError('D23', WINDOW, 20_000).message, /span of 20 seconds; retry later, or pass a smaller minSplitSpan \(--min-split in the CLI\)\.$/);
    assert.match(new WindowTimeoutError('D23', WINDOW, 90 * 60_000).message, /span of 1\.5 hours;/);
    assert.match(new WindowTimeoutError('D23', WINDOW, 2 * 86_400_000).message, /span of 2 days;/);
    assert.match(new WindowTimeoutError('D07', WINDOW, 60_000).message, /span of 1 minute; retry later, or pass a smaller limit or minSplitSpan \(--limit, --min-split in the CLI\)\.$/);
  });

  it('is not sent again by the retry loop, unlike a plain 504', async () => {
    const ctx = { method: 'GET', path: '/x' };
    let calls = 0;
    await assert.rejects(withRetry(FAST, ctx, async () => {
      calls += 1;
      throw new WindowTimeoutError('D23', WINDOW, 3_600_000);
    }), WindowTimeoutError);
    assert.equal(calls, 1);

    calls = 0;
    await assert.rejects(withRetry(FAST, ctx, async () => {
      calls += 1;
      throw new GatewayTimeoutError('504', { status: 504 });
    }), GatewayTimeoutError);
    assert.equal(calls, FAST.attempts);
  });
});
