// Retries over HTTPS against injected faults: 30% 500s and 10% connection resets mid-body.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RetryEvent } from '../../src/core/api.ts';
import { LenderClient } from '../../src/client/client.ts';
import { NetworkError, ServerError } from '../../src/core/errors.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

describe('retries under faults', () => {
  let t: TestSandbox;
  let client: LenderClient;

  before(async () => {
    t = await startTestSandbox();
    // 20 attempts: with 40% faulty responses a call fails only with p = 0.4^20 ≈ 1e-8.
    client = await LenderClient.login({
      ...t.sandbox.credentials('demo'),
      retry: { attempts: 20, baseDelayMs: 1, maxDelayMs: 4, maxElapsedMs: 60_000 },
    });
  });
  after(async () => {
    await client.close();
    await t.close();
  });

  it('200 catalog and page calls all succeed with faults 500=0.3,reset=0.1, and the retries are counted', async (ctx) => {
    t.sandbox.setFaults({ faults: { '500': 0.3, reset: 0.1 } });
    const events: RetryEvent[] = [];
    client.on('retry', (e) => events.push(e));
    let cursor: string | undefined;
    let rows = 0;
    try {
      for (let i = 0; i < 200; i++) {
        if (i % 4 === 0) {
          const catalog = await client.catalog();
          assert.equal(catalog.sections.length, 5);
          continue;
        }
        const page = await client.fetchPage('D07', { limit: 3, ...(cursor !== undefined ? { cursor } : {}) });
        rows += page.rows.length;
        cursor = page.pagination.nextCursor ?? undefined;
      }
    } finally {
      t.sandbox.setFaults({ faults: {} });
    }
    ctx.diagnostic(`retries: ${client.stats.retries} (${events.filter((e) => e.error instanceof ServerError).length} after 500s, ` +
      `${events.filter((e) => e.error instanceof NetworkError).length} after resets), requests: ${client.stats.requests}`);
    assert.ok(rows > 0);
    assert.equal(client.stats.retries, events.length);
    assert.ok(events.some((e) => e.error instanceof ServerError && e.error.status === 500), 'some 500s were retried');
    assert.ok(events.some((e) => e.error instanceof NetworkError), 'some resets were retried');
    assert.ok(events.every((e) => e.attempt >= 1 && e.delayMs >= 0 && e.delayMs <= 4));
  });
});
