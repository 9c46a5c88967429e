// The account and flag writers over real HTTPS against an in-process sandbox: the round trip into
// D02/D03, a record only the service refuses, key order under concurrency, faults, retries bounded
// by the delivery deadline rather than a count, a property test over random mixes of records, and
// bounded memory with a fast source.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createAccountWriter, type AccountWriterOptions } from '../../src/accounts/account-writer.ts';
import { setFlags } from '../../src/accounts/flags.ts';
import { validateAccount } from '../../src/accounts/schema.ts';
import { MalformedRecord } from '../../src/accounts/source-record.ts';
import type { RejectEvent } from '../../src/accounts/writer.ts';
import type { RequestOptions, RetryEvent, ServiceApi } from '../../src/core/api.ts';
import { RateLimitError } from '../../src/core/errors.ts';
import { LenderClient } from '../../src/client/client.ts';
import type { ExportRow } from '../../src/core/types.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { TEST_SANDBOX_DEFAULTS } from '../helpers/sandbox.ts';

let sandbox: Sandbox;
let client: LenderClient;

before(async () => {
  sandbox = await startSandbox({ ...TEST_SANDBOX_DEFAULTS, seed: 7, scale: 20 });
  // Short backoff: the fault test retries many times and must stay quick.
  client = await LenderClient.login({ ...sandbox.credentials('demo'), retry: { attempts: 12, baseDelayMs: 1, maxDelayMs: 4 } });
});
after(async () => {
  await client?.close();
  await sandbox?.close();
});

/** Pushed rows are stamped after the seeded data span, so this bound skips the seeded portfolio. */
const PUSHED_SINCE = '2026-10-01T00:00:00.000Z';

async function rows(dataset: 'D01' | 'D02' | 'D03', debtorPrefix: string): Promise<ExportRow[]> {
  const found: ExportRow[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.fetchPage(dataset, { since: PUSHED_SINCE, limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    found.push(...page.rows.filter((r) => String(r.debtor_company_id).startsWith(debtorPrefix)));
    cursor = page.pagination.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return found;
}

async function push(records: unknown[], opts: AccountWriterOptions = {}, api: ServiceApi = client) {
  const writer = createAccountWriter(api, opts);
  const rejects: RejectEvent[] = [];
  writer.on('reject', (r: RejectEvent) => rejects.push(r));
  await pipeline(Readable.from(records, { objectMode: true }), writer);
  return { summary: writer.summary, rejects, writer };
}

function person(debtorCompanyId: string) {
  // With every field either documented list requires: the sandbox of the tests is strict.
  return {
    debtorCompanyId, firstName: 'Amal', lastName: 'Haddad', language: 'en',
    birthDate: '04/04/1984', dateDue: '01/06/2027', phones: [{ number: '+971500000004' }], loanType: 3,
  };
}

/** A ServiceApi that remembers what was sent, and can delay each request by a random amount so
 * concurrent requests arrive in any order. */
function capturing(inner: ServiceApi, jitterMs = 0): ServiceApi & { sent: Record<string, unknown>[] } {
  const sent: Record<string, unknown>[] = [];
  const delay = () => (jitterMs > 0 ? new Promise((r) => setTimeout(r, Math.random() * jitterMs)) : Promise.resolve());
  return {
    sent,
    get lenderPublicId() {
      return inner.lenderPublicId;
    },
    catalog: (opts) => inner.catalog(opts),
    fetchPage: (d, q, o) => inner.fetchPage(d, q, o),
    async upsertAccounts(records: readonly object[], opts?: RequestOptions) {
      await delay();
      sent.push(...(records as Record<string, unknown>[]));
      return inner.upsertAccounts(records, opts);
    },
    async updateStatus(records: readonly object[], opts?: RequestOptions) {
      await delay();
      sent.push(...(records as Record<string, unknown>[]));
      return inner.updateStatus(records, opts);
    },
  };
}

describe('account writer over HTTPS', () => {
  it('round trip: balances follow principal less paidAmount, withdrawals and flags show in D02/D03', async () => {
    const who = person('RT-1');
    const first = await push(
      [
        { ...who, status: 'create', accountId: 'RT-A', subAccountId: 'S1', principal: 100, paidAmount: '30', dateDue: new Date(Date.UTC(2026, 5, 30)) },
        { ...who, status: 'create', accountId: 'RT-A', subAccountId: 'S2', principal: '20' },
        { ...who, status: 'create', accountId: 'RT-B', subAccountId: 'S1', principal: '10' },
      ],
      { batchSize: 2, concurrency: 2 },
    );
    assert.deepEqual(first.summary, { ...first.summary, received: 3, accepted: 3, rejected: 0 });
    await sandbox.drain();
    const created = await rows('D03', 'RT-1');
    const s1 = created.find((r) => r.account_id === 'RT-A' && r.sub_account_id === 'S1');
    assert.equal(s1?.balance, '70');
    assert.equal(s1?.date_due, '30/06/2026');

    await push(
      [
        { ...who, status: 'update', accountId: 'RT-A', subAccountId: 'S1', principal: '100', paidAmount: 50 },
        { ...who, status: 'withdraw', accountId: 'RT-A', subAccountId: 'S2', principal: '20' },
      ],
      { batchSize: 1, concurrency: 2 },
    );
    await sandbox.drain();
    const subs = await rows('D03', 'RT-1');
    const byId = (acc: string, sub: string) => subs.find((r) => r.account_id === acc && r.sub_account_id === sub);
    assert.equal(byId('RT-A', 'S1')?.balance, '50');
    assert.equal(byId('RT-A', 'S1')?.paid_amount, '50');
    assert.equal(byId('RT-A', 'S2')?.status, 'withdrawn');
    assert.equal(byId('RT-B', 'S1')?.status, 'active');
    const accounts = await rows('D02', 'RT-1');
    const rtA = accounts.find((r) => r.account_id === 'RT-A');
    assert.equal(rtA?.outstanding_balance, '50');
    assert.equal(rtA?.active_sub_account_count, 1);

    const flagged = await setFlags(client, [
      { status: 'doNotContact', debtorCompanyId: 'RT-1', accountId: 'RT-A' },
      { status: 'disputed', debtorCompanyId: 'RT-1', accountId: 'RT-B' },
    ]);
    assert.deepEqual({ ...flagged, rejects: [] }, { ...flagged, rejects: [], received: 2, accepted: 2, rejected: 0 });
    await sandbox.drain();
    const after = await rows('D02', 'RT-1');
    assert.equal(after.length, 2);
    // Do Not Contact covers every account of the debtor, not only the one named.
    for (const row of after) assert.equal(row.do_not_contact, true, String(row.account_id));
    assert.deepEqual(after.map((r) => [r.account_id, r.disputed]).sort(), [['RT-A', false], ['RT-B', true]]);
    const [debtor] = await rows('D01', 'RT-1');
    assert.equal(debtor?.do_not_contact, true);
  });

  it("a record only the service refuses is rejected with the service's message; the rest of its batch is processed", async () => {
    const before = sandbox.stats().accountsProcessed;
    const who = person('SV-1');
    const records = Array.from({ length: 5 }, (_, i) => ({ ...who, status: 1, accountId: `SV-${i}`, subAccountId: 'S', principal: '5' }));
    // The email format is checked by the service only (it documents no rule, see schema.ts).
    (records[2] as Record<string, unknown>).emails = [{ email: 'not-an-address' }];
    const { summary, rejects } = await push(records, { batchSize: 10 });
    assert.deepEqual(rejects.map((r) => [r.index, r.reason, r.errors]), [[2, 'server', ['emails[0].email must be a valid email address']]]);
    assert.deepEqual(summary, { ...summary, received: 5, accepted: 4, rejected: 1, batches: 1, requests: 2 });
    await sandbox.drain();
    assert.equal(sandbox.stats().accountsProcessed - before, 4);
    assert.deepEqual((await rows('D03', 'SV-1')).map((r) => r.account_id).sort(), ['SV-0', 'SV-1', 'SV-3', 'SV-4']);
  });

  it('create-then-update of one sub-account ends updated, with concurrency 4, on every one of 20 runs', async () => {
    // Requests are delayed at random before they leave, so with several in flight they reach the
    // service in any order; only the writer's key ordering keeps each update after its create.
    const api = capturing(client, 15);
    for (let run = 0; run < 20; run++) {
      const who = person(`ORD-${run}`);
      const key = { ...who, accountId: `ORD-${run}`, subAccountId: 'S' };
      const filler = (i: number) => ({ ...who, status: 1, accountId: `ORD-${run}-F${i}`, subAccountId: 'S', principal: '1' });
      const { summary } = await push(
        [
          { ...key, status: 1, principal: '100', paidAmount: '0' },
          filler(1), filler(2), filler(3), filler(4), filler(5),
          { ...key, status: 2, principal: '100', paidAmount: '60' },
          filler(6),
        ],
        { batchSize: 2, concurrency: 4 },
        api,
      );
      assert.equal(summary.accepted, 8);
    }
    await sandbox.drain();
    const subs = (await rows('D03', 'ORD-')).filter((r) => /^ORD-\d+$/.test(String(r.account_id)));
    assert.equal(subs.length, 20);
    for (const row of subs) assert.equal(row.balance, '40', String(row.account_id));
  });

  it('with 500s and connection resets, every valid record is accepted exactly once', async () => {
    const before = sandbox.stats();
    sandbox.setFaults({ faults: { '500': 0.2, reset: 0.1 } });
    let result;
    try {
      const records = Array.from({ length: 210 }, (_, i) =>
        i % 21 === 20
          ? { ...person('FLT-1'), status: 1, accountId: `FLT-${i}`, subAccountId: 'S', principal: 'n/a' }
          : { ...person('FLT-1'), status: 1, accountId: `FLT-${i}`, subAccountId: 'S', principal: String(i) },
      );
      // 70 requests: with 30% of them faulted, none is hit but once in 10^10 runs (with 21, once in 1,800).
      result = await push(records, { batchSize: 3, concurrency: 3 });
    } finally {
      sandbox.setFaults({ faults: {} });
    }
    const { summary } = result;
    assert.deepEqual(summary, { ...summary, received: 210, accepted: 200, rejected: 10, rejectedByReason: { invalid: 10 } });
    assert.ok(summary.retries > 0, 'faults were hit and retried');
    await sandbox.drain();
    const stats = sandbox.stats();
    assert.ok(stats.faultsInjected > before.faultsInjected);
    // Faults are injected before the handler, so a faulted request processed nothing: a record
    // counted twice would mean a retry duplicated it.
    assert.equal(stats.accountsProcessed - before.accountsProcessed, 200);
    assert.equal((await rows('D03', 'FLT-1')).length, 200);
  });

  describe('delivery deadline', () => {
    // The client's default attempt count (5), with a short backoff so that many retries are quick.
    let fiveAttempts: LenderClient;
    before(async () => {
      fiveAttempts = await LenderClient.login({ ...sandbox.credentials('demo'), retry: { baseDelayMs: 1, maxDelayMs: 4 } });
    });
    after(() => fiveAttempts?.close());

    /** 503 on every request until the client has retried `retries` times, then none. */
    async function pushThroughOutage(retries: number, records: unknown[], opts: AccountWriterOptions) {
      let seen = 0;
      const onRetry = () => {
        if (++seen === retries) sandbox.setFaults({ faults: {} });
      };
      fiveAttempts.on('retry', onRetry);
      sandbox.setFaults({ faults: { '503': 1 } });
      try {
        return await push(records, opts, fiveAttempts);
      } finally {
        fiveAttempts.off('retry', onRetry);
        sandbox.setFaults({ faults: {} });
      }
    }

    const records = (tag: string) => [0, 1, 2].map((i) => ({ ...person(tag), status: 1, accountId: `${tag}-${i}`, subAccountId: 'S', principal: '1' }));

    it('a batch refused 7 times in a row is delivered by default (the deadline, not a count, bounds it)', async () => {
      const before = sandbox.stats();
      const { summary, rejects } = await pushThroughOutage(7, records('DL-1'), { batchSize: 10 });
      assert.deepEqual(rejects, []);
      assert.deepEqual([summary.accepted, summary.retries, summary.requests], [3, 7, 1]);
      await sandbox.drain();
      const after = sandbox.stats();
      assert.equal(after.faultsInjected - before.faultsInjected, 7);
      assert.equal(after.accountsProcessed - before.accountsProcessed, 3);
    });

    it('a 429 (a rate-limiting gateway) is retried after its Retry-After, and the batch delivered once', async () => {
      const before = sandbox.stats();
      const events: RetryEvent[] = [];
      const onRetry = (event: RetryEvent) => {
        events.push(event);
        sandbox.setFaults({ faults: {} });
      };
      fiveAttempts.on('retry', onRetry);
      sandbox.setFaults({ faults: { '429': 1 } });
      let result;
      try {
        result = await push(records('DL-429'), { batchSize: 10 }, fiveAttempts);
      } finally {
        fiveAttempts.off('retry', onRetry);
        sandbox.setFaults({ faults: {} });
      }
      assert.deepEqual(result.rejects, []);
      assert.deepEqual([result.summary.accepted, result.summary.retries], [3, 1]);
      assert.ok(events[0]?.error instanceof RateLimitError, String(events[0]?.error));
      // Retry-After (1 s) capped by the client's maxDelayMs (4): a jittered delay is at most 3.
      assert.equal(events[0]!.delayMs, 4);
      await sandbox.drain();
      assert.equal(sandbox.stats().accountsProcessed - before.accountsProcessed, 3);
    });

    it('with retry.attempts 5 the same outage fails the batch, with the 503 as its reason', async () => {
      const { summary, rejects } = await pushThroughOutage(7, records('DL-2'), { batchSize: 10, retry: { attempts: 5 } });
      assert.deepEqual([summary.accepted, summary.rejectedByReason, summary.retries], [0, { failed: 3 }, 4]);
      for (const r of rejects) assert.match(r.errors[0]!, /^The service failed on POST \S+\/accounts with status 503: Service unavailable/);
    });

    it('a 300 ms deadline against a service that always 503s ends the batch failed, with the reason', { timeout: 60_000 }, async () => {
      const before = sandbox.stats();
      sandbox.setFaults({ faults: { '503': 1 } });
      let result;
      try {
        result = await push(records('DL-3'), { batchSize: 10, deliveryTimeoutMs: 300 }, fiveAttempts);
      } finally {
        sandbox.setFaults({ faults: {} });
      }
      const { summary, rejects } = result;
      assert.deepEqual([summary.accepted, summary.rejectedByReason], [0, { failed: 3 }]);
      assert.equal(summary.retries, sandbox.stats().faultsInjected - before.faultsInjected - 1);
      for (const r of rejects) assert.match(r.errors[0]!, /status 503: Service unavailable/);
    });
  });

  it('property: for random mixes of records, every one is accounted for, no invalid one is sent, no valid one rejected', async () => {
    let run = 0;
    const validRecord = (tag: string) =>
      fc.record({
        status: fc.constantFrom(1, 2, 'create', 'update'),
        principal: fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom('0', '12.50', '-3')),
        paidAmount: fc.option(fc.constantFrom('0', '1.25', 7), { nil: undefined }),
        // Always there, with loanType: the union of both documented required lists.
        dateDue: fc.oneof(fc.constant('28/02/2026'), fc.date({ min: new Date(2000, 0, 1), max: new Date(2040, 0, 1), noInvalidDate: true })),
        language: fc.constantFrom('en', 'ar'),
        loanType: fc.integer({ min: 1, max: 8 }),
      }).map((r) => ({ ...person(tag), accountId: tag, subAccountId: 'S', ...r }));
    const breakIt = fc.constantFrom<[string, unknown]>(
      ['principal', 'abc'], ['status', 9], ['firstName', ' '], ['language', 'fr'], ['dateDue', '31/02/2024'], ['accountId', undefined], ['loanType', 0],
    );
    const item = fc.oneof(
      { weight: 5, arbitrary: validRecord('x').map((r) => ({ kind: 'valid' as const, r })) },
      { weight: 2, arbitrary: fc.tuple(validRecord('x'), breakIt).map(([r, [k, v]]) => ({ kind: 'invalid' as const, r: { ...r, [k]: v } })) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(5, 'text', [1, 2], true).map((r) => ({ kind: 'malformed' as const, r })) },
      { weight: 1, arbitrary: fc.constant({ kind: 'malformed' as const, r: new MalformedRecord('{"a":', { line: 1 }, 'line 1 is not valid JSON') }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 4 }), async (items, batchSize, concurrency) => {
        run += 1;
        // Unique ids per record, so what was sent can be matched to what was written.
        const written = items.map((it, i) => {
          if (it.kind === 'malformed') return it.r;
          const id = `PB-${run}-${i}`;
          const r = it.r as Record<string, unknown>;
          return { ...r, debtorCompanyId: `PB-${run}`, ...('accountId' in r && r.accountId === undefined ? {} : { accountId: id }) };
        });
        const api = capturing(client);
        const { summary, rejects } = await push(written, { batchSize, concurrency }, api);
        assert.equal(summary.received, items.length);
        assert.equal(summary.accepted + summary.rejected, summary.received);
        const validIdx = items.flatMap((it, i) => (it.kind === 'valid' ? [i] : []));
        assert.equal(summary.accepted, validIdx.length);
        assert.deepEqual(rejects.map((r) => r.index).sort((a, b) => a - b), items.flatMap((it, i) => (it.kind === 'valid' ? [] : [i])));
        for (const sent of api.sent) assert.equal(validateAccount(sent).ok, true);
        assert.deepEqual(api.sent.map((s) => s.accountId).sort(), validIdx.map((i) => `PB-${run}-${i}`).sort());
      }),
      { numRuns: 15 },
    );
  });

  it('a source faster than the service keeps the writer within its limits', async () => {
    sandbox.setFaults({ latencyMs: 3 });
    try {
      const writer = createAccountWriter(client, { batchSize: 25, concurrency: 2, maxBuffered: 75, highWaterMark: 8 });
      let maxQueued = 0;
      const source = Readable.from(
        (function* () {
          for (let i = 0; i < 1000; i++) {
            maxQueued = Math.max(maxQueued, writer.writableLength);
            yield { ...person('MEM-1'), status: 1, accountId: `MEM-${i}`, subAccountId: 'S', principal: '1' };
          }
        })(),
      );
      await pipeline(source, writer);
      assert.equal(writer.summary.accepted, 1000);
      assert.ok(writer.bufferState().peakBuffered <= 75, `peak ${writer.bufferState().peakBuffered}`);
      assert.ok(writer.bufferState().peakBuffered >= 50, 'the source did outrun the service');
      assert.ok(maxQueued <= 8, `queued ${maxQueued}`);
    } finally {
      sandbox.setFaults({ latencyMs: 0 });
    }
  });
});
