// A batch is retried until its delivery deadline, not for a fixed count: the policy each request is
// handed, and the writer against a fake service that retries as the client does (short backoff,
// the client's default count of 5). writer-sandbox.test.ts repeats the two outcomes over HTTPS.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import { createAccountWriter } from '../../src/accounts/account-writer.ts';
import { DEFAULT_DELIVERY_TIMEOUT_MS, DeliveryDeadline, deliveryTimeoutOption } from '../../src/accounts/delivery-deadline.ts';
import type { AccountWriterOptions } from '../../src/accounts/account-writer.ts';
import type { RejectEvent } from '../../src/accounts/writer.ts';
import { ConfigError, ServerError } from '../../src/core/errors.ts';
import { account, FakeService, rejectWhere } from './fake-service.ts';

const UNAVAILABLE = 'The service is unavailable (HTTP 503).';

/** A fake whose first `failures` attempts answer 503, retried as the client would, fast. */
function flaky(failures: number): FakeService {
  const api = new FakeService();
  api.clientRetry = { baseDelayMs: 1, maxDelayMs: 2 };
  let attempts = 0;
  api.handler = () => {
    attempts += 1;
    if (attempts <= failures) throw new ServerError(UNAVAILABLE, { status: 503 });
  };
  return api;
}

async function push(api: FakeService, records: unknown[], opts: AccountWriterOptions) {
  const writer = createAccountWriter(api, opts);
  const rejects: RejectEvent[] = [];
  writer.on('reject', (r: RejectEvent) => rejects.push(r));
  await pipeline(Readable.from(records, { objectMode: true }), writer);
  return { summary: writer.summary, rejects };
}

describe('DeliveryDeadline', () => {
  it('hands each request unbounded attempts and what is left of the deadline', () => {
    let now = 1_000;
    const deadline = new DeliveryDeadline(300, () => now);
    assert.deepEqual(deadline.policyFor(undefined), { attempts: Number.MAX_SAFE_INTEGER, maxElapsedMs: 300 });
    now += 120;
    assert.deepEqual(deadline.policyFor({ baseDelayMs: 5 }), { baseDelayMs: 5, attempts: Number.MAX_SAFE_INTEGER, maxElapsedMs: 180 });
    now += 1_000;
    assert.equal(deadline.remainingMs, 0, 'never negative: the request is still sent once');
    assert.equal(deadline.policyFor(undefined).maxElapsedMs, 0);
  });

  it('a count or a shorter elapsed bound of the caller bounds the request as well', () => {
    const deadline = new DeliveryDeadline(60_000, () => 0);
    assert.deepEqual(deadline.policyFor({ attempts: 5 }), { attempts: 5, maxElapsedMs: 60_000 });
    assert.deepEqual(deadline.policyFor({ maxElapsedMs: 1_000 }), { attempts: Number.MAX_SAFE_INTEGER, maxElapsedMs: 1_000 });
  });

  it('the option defaults to two minutes, takes Infinity and any duration, and refuses what is not a positive one', () => {
    assert.equal(DEFAULT_DELIVERY_TIMEOUT_MS, 120_000);
    assert.equal(deliveryTimeoutOption(undefined), 120_000);
    assert.equal(deliveryTimeoutOption(Number.POSITIVE_INFINITY), Number.POSITIVE_INFINITY);
    assert.equal(new DeliveryDeadline(Number.POSITIVE_INFINITY).remainingMs, Number.POSITIVE_INFINITY);
    // The one duration rule of every option (src/core/options.ts), so '2m' is two minutes here too.
    assert.equal(deliveryTimeoutOption('2m' as unknown as number), 120_000);
    for (const bad of [0, -5, Number.NaN, 'soon' as unknown as number]) {
      assert.throws(() => deliveryTimeoutOption(bad), (e: unknown) => e instanceof ConfigError && /^deliveryTimeoutMs must be (a duration|at least 1 ms)/.test(e.message), String(bad));
    }
    assert.throws(() => createAccountWriter(new FakeService(), { deliveryTimeoutMs: 0 }), ConfigError);
  });
});

describe('writer: retries bounded by the delivery deadline', () => {
  it('a batch failing 7 times in a row within the deadline is delivered by default, and failed with attempts: 5', async () => {
    const byDefault = flaky(7);
    const delivered = await push(byDefault, [account(), account()], {});
    assert.deepEqual([delivered.summary.accepted, delivered.summary.rejected, delivered.summary.retries], [2, 0, 7]);
    assert.equal(byDefault.calls.length, 8);
    assert.equal(byDefault.processed.length, 2);

    const counted = flaky(7);
    const failed = await push(counted, [account(), account()], { retry: { attempts: 5 } });
    assert.deepEqual([failed.summary.accepted, failed.summary.rejectedByReason, failed.summary.retries], [0, { failed: 2 }, 4]);
    assert.equal(counted.calls.length, 5);
    assert.deepEqual(failed.rejects.map((r) => [r.reason, r.errors]), [['failed', [UNAVAILABLE]], ['failed', [UNAVAILABLE]]]);
  });

  it('with a short deadline against a service that always fails, the batch ends failed with the last reason', { timeout: 60_000 }, async () => {
    const api = new FakeService();
    api.clientRetry = { baseDelayMs: 2, maxDelayMs: 10 };
    let attempts = 0;
    api.handler = () => {
      attempts += 1;
      throw new ServerError(`${UNAVAILABLE} #${attempts}`, { status: 503 });
    };
    const { summary, rejects } = await push(api, [account(), account(), account()], { deliveryTimeoutMs: 300, batchSize: 2 });
    assert.deepEqual([summary.accepted, summary.rejected, summary.rejectedByReason], [0, 3, { failed: 3 }]);
    // Two batches: every attempt after each one's first was a retry of the client's.
    assert.equal(summary.retries, attempts - 2);
    // The last attempt of each batch gave its records their reason.
    const last = new Map<number, string>();
    for (const r of rejects) last.set(r.index, r.errors[0]!);
    for (const message of last.values()) assert.match(message, /^The service is unavailable \(HTTP 503\)\. #\d+$/);
    // Each batch's requests were given at most the deadline, and no count.
    for (const call of api.calls) {
      assert.equal(call.retry?.attempts, Number.MAX_SAFE_INTEGER);
      assert.ok(call.retry!.maxElapsedMs! <= 300);
    }
  });

  it('the requests after a 400 split share the batch deadline', async () => {
    const api = new FakeService();
    api.handler = rejectWhere((r) => (r.merchant === 'bad' ? 'merchant is not allowed' : undefined));
    await push(api, [account(), account({ merchant: 'bad' }), account()], { deliveryTimeoutMs: 60_000, batchSize: 10 });
    const [first, second] = api.calls.map((c) => c.retry!.maxElapsedMs!);
    assert.ok(first! <= 60_000 && second! <= first!, `${first} then ${second}`);
  });

  it('each batch has its own deadline, from its own first request', async () => {
    const api = new FakeService();
    let calls = 0;
    api.handler = () => (calls++ === 0 ? new Promise((r) => setTimeout(r, 600)) : undefined);
    await push(api, [account(), account()], { deliveryTimeoutMs: 100_000, batchSize: 1, concurrency: 1 });
    const [first, second] = api.calls.map((c) => c.retry!.maxElapsedMs!);
    // The second batch started after the first had used 600 ms, and was not charged for them.
    assert.ok(second! > 100_000 - 300, `${first} then ${second}`);
  });
});
