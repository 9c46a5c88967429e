// Retries and token renewals are reported per call, over real HTTPS against the sandbox: two
// streams of the same dataset (or two writers) sharing one client each count only the retries of
// their own requests, and a renewal is reported to the calls that waited for it.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { createAccountWriter } from '../../src/accounts/account-writer.ts';
import type { RefreshEvent, RequestOptions, RetryEvent, ServiceApi } from '../../src/core/api.ts';
import { LenderClient } from '../../src/client/client.ts';
import type { ExportRow } from '../../src/core/types.ts';
import { exportPages, exportRows } from '../../src/exports/export-stream.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { drain, multiset } from '../exports/helpers.ts';
import { TEST_SANDBOX_DEFAULTS } from '../helpers/sandbox.ts';

// Faults that are always retried: no 504, which a splittable window answers with a split.
const FAULTS = { faults: { '500': 0.12, '503': 0.05, reset: 0.05 } };

/**
 * The client, with every call made through it also tallied by a listener of its own: the
 * retries the client reported for exactly the requests this wrapper carried.
 */
function tallied(inner: ServiceApi): ServiceApi & { retries: number } {
  const wrap = <O extends RequestOptions>(opts: O | undefined): O => ({
    ...opts,
    onRetry: (event: RetryEvent) => {
      api.retries += 1;
      opts?.onRetry?.(event);
    },
  }) as O;
  const api = {
    retries: 0,
    get lenderPublicId() {
      return inner.lenderPublicId;
    },
    catalog: (opts) => inner.catalog(wrap(opts)),
    fetchPage: (d, q, opts) => inner.fetchPage(d, q, wrap(opts)),
    upsertAccounts: (records, opts) => inner.upsertAccounts(records, wrap(opts)),
    updateStatus: (records, opts) => inner.updateStatus(records, wrap(opts)),
  } satisfies ServiceApi & { retries: number };
  return api;
}

let sandbox: Sandbox;
let client: LenderClient;

before(async () => {
  sandbox = await startSandbox({ ...TEST_SANDBOX_DEFAULTS, seed: 21, scale: 300 });
  client = await LenderClient.login({ ...sandbox.credentials('demo'), retry: { attempts: 30, baseDelayMs: 1, maxDelayMs: 4 } });
});
after(async () => {
  await client?.close();
  await sandbox?.close();
});

describe('two export streams of one dataset on one client, under faults', () => {
  it("each stream's stats.retries are the retries of its own requests, not the other's", async () => {
    const clean = multiset(await drain<ExportRow>(exportRows(client, 'D07', { limit: 10 })));
    const apis = [tallied(client), tallied(client)];
    // 100 pages a stream: with 22% of requests faulted, each meets a fault but once in 10^10 runs
    // (with 30, once in 1,700).
    const streams = apis.map((api) => exportRows(api, 'D07', { limit: 3, concurrency: 2 }));
    const emitted = [0, 0];
    streams.forEach((stream, i) => stream.on('retry', (e: RetryEvent & { dataset: string }) => {
      assert.equal(e.dataset, 'D07');
      emitted[i]! += 1;
    }));
    const clientBefore = client.stats.retries;
    const faultsBefore = sandbox.stats().faultsInjected;
    sandbox.setFaults(FAULTS);
    let results: ExportRow[][];
    try {
      results = await Promise.all(streams.map((s) => drain<ExportRow>(s)));
    } finally {
      sandbox.setFaults({ faults: {} });
    }
    const clientRetries = client.stats.retries - clientBefore;
    for (const rows of results) assert.deepEqual(multiset(rows), clean);
    const counted = streams.map((s) => s.stats.retries);
    const own = apis.map((a) => a.retries);
    assert.ok(own.every((n) => n > 0), `both streams met faults: ${own}`);
    assert.deepEqual(counted, own, `each stream counts its own retries (client made ${clientRetries})`);
    assert.deepEqual(emitted, own, "each stream emits 'retry' for its own retries only");
    assert.equal(counted[0]! + counted[1]!, clientRetries, 'together they count every retry the client made, once');
    assert.equal(clientRetries, sandbox.stats().faultsInjected - faultsBefore, 'one retry per injected fault');
  });
});

describe('two account writers on one client, under faults', () => {
  it("each writer's summary.retries are the retries of its own requests, not the other's", async () => {
    // 100 requests a writer: with 22% of requests faulted, each meets a fault but once in 10^10 runs
    // (with 20, once in 150).
    const records = (tag: string) => Array.from({ length: 200 }, (_, i) => ({
      debtorCompanyId: `${tag}-${i % 7}`, firstName: 'Amal', lastName: 'Haddad', language: 'en',
      status: 1, accountId: `${tag}-A${i}`, subAccountId: 'S', principal: '1',
      birthDate: '04/04/1984', dateDue: '01/06/2027', phones: [{ number: '+971500000004' }], loanType: 3,
    }));
    const apis = [tallied(client), tallied(client)];
    const writers = apis.map((api) => createAccountWriter(api, { batchSize: 2, concurrency: 2 }));
    const emitted = [0, 0];
    writers.forEach((writer, i) => writer.on('retry', () => void (emitted[i]! += 1)));
    const clientBefore = client.stats.retries;
    const faultsBefore = sandbox.stats().faultsInjected;
    sandbox.setFaults(FAULTS);
    try {
      await Promise.all(writers.map((writer, i) => pipeline(Readable.from(records(`PCR${i}`), { objectMode: true }), writer)));
    } finally {
      sandbox.setFaults({ faults: {} });
    }
    const clientRetries = client.stats.retries - clientBefore;
    for (const writer of writers) assert.deepEqual([writer.summary.accepted, writer.summary.rejected], [200, 0]);
    const counted = writers.map((w) => w.summary.retries);
    const own = apis.map((a) => a.retries);
    assert.ok(own.every((n) => n > 0), `both writers met faults: ${own}`);
    assert.deepEqual(counted, own, `each writer counts its own retries (client made ${clientRetries})`);
    assert.deepEqual(emitted, own, "each writer emits 'retry' for its own retries only");
    assert.equal(counted[0]! + counted[1]!, clientRetries, 'together they count every retry the client made, once');
    assert.equal(clientRetries, sandbox.stats().faultsInjected - faultsBefore, 'one retry per injected fault');
  });
});

describe('token renewals are reported to the calls that waited for them', () => {
  /** A client whose first access token lives `ttlSeconds`; tokens minted after it outlast the test. */
  async function clientWithShortToken(ttlSeconds: number): Promise<LenderClient> {
    sandbox.setFaults({ tokenTtlSeconds: ttlSeconds });
    try {
      return await LenderClient.login(sandbox.credentials('demo'));
    } finally {
      sandbox.setFaults({ tokenTtlSeconds: 900 });
    }
  }

  it('one shared renewal is told to each of the concurrent calls, and counted once by the client', async () => {
    // A 1 s token (whole-second claims) is renewed at its first use.
    const c = await clientWithShortToken(1);
    try {
      const seen: RefreshEvent[][] = Array.from({ length: 20 }, () => []);
      await Promise.all(seen.map((events) => c.fetchPage('D07', { limit: 1 }, { onRefresh: (e) => events.push(e) })));
      assert.deepEqual(seen, seen.map(() => [{ reason: 'proactive' }]));
      assert.equal(c.stats.refreshes, 1);
      const later: RefreshEvent[] = [];
      await c.fetchPage('D07', { limit: 1 }, { onRefresh: (e) => later.push(e) });
      assert.deepEqual(later, [], 'a call that waited for no renewal is told of none');
    } finally {
      await c.close();
    }
  });

  it("a stream emits 'refresh' for a renewal its requests waited for, not for another's", async () => {
    // A 4 s token is due for renewal 2.4 s after it arrives (jwt.ts refreshDueAt).
    const c = await clientWithShortToken(4);
    try {
      const streams = [exportPages(c, 'D07', { limit: 10, prefetch: 0 }), exportPages(c, 'D07', { limit: 10, prefetch: 0 })];
      const refreshes = [0, 0];
      streams.forEach((s, i) => s.on('refresh', () => void (refreshes[i]! += 1)));
      const iterators = streams.map((s) => s[Symbol.asyncIterator]());
      // Both streams are under way before the renewal.
      for (const it of iterators) assert.equal((await it.next()).done, false);
      assert.equal(c.stats.refreshes, 0);
      await sleep(2500);
      // The first stream's next request renews the token; the second reads on with the new one.
      for (const it of iterators) while (!(await it.next()).done);
      assert.equal(c.stats.refreshes, 1);
      assert.deepEqual(refreshes, [1, 0]);
    } finally {
      await c.close();
    }
  });
});
