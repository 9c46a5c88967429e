// The accounts module with its handlers called directly: queueing, arrival order, drain, the
// counters, and the seeded portfolio. The same behaviour over HTTPS is in accounts-http.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAccountsModule } from '../../src/sandbox/accounts/index.ts';
import { ProcessingQueue } from '../../src/sandbox/accounts/processing-queue.ts';
import { seededSubAccountCount } from '../../src/sandbox/accounts/seed-portfolio.ts';
import type {
  AccountEventRecord,
  AccountRecord,
  AccountsModule,
  DebtorRecord,
  PortfolioListener,
  ResolvedSandboxOptions,
  RouteRequest,
  RouteResponse,
  SandboxContext,
  SubAccountRecord,
  Tenant,
} from '../../src/sandbox/contracts.ts';

const demo: Tenant = { lender: 'demo', email: 'd', password: 'p', lenderPublicId: 'L-demo', index: 0 };
const other: Tenant = { lender: 'other', email: 'o', password: 'p', lenderPublicId: 'L-other', index: 1 };

interface Seen {
  debtors: [string, DebtorRecord][];
  accounts: [string, AccountRecord][];
  subs: [string, SubAccountRecord][];
  events: [string, AccountEventRecord][];
}

interface Harness {
  module: AccountsModule;
  ctx: SandboxContext;
  seen: Seen;
  /** Writes made inside listener.seeding(), per call of it. */
  seedingCalls: number[];
  call: (path: 0 | 1, tenant: Tenant, body: unknown) => Promise<RouteResponse>;
}

function harness(scale = 0, failOn?: (sub: SubAccountRecord) => boolean): Harness {
  let tick = Date.parse('2026-10-01T00:00:00.000Z');
  const ctx: SandboxContext = {
    options: { seed: 42, scale } as ResolvedSandboxOptions,
    tenants: [demo, other],
    tenantByPublicId: (id) => [demo, other].find((t) => t.lenderPublicId === id),
    faults: { latencyMs: 0, faults: {}, tokenTtlSeconds: 900 },
    availability: {},
    stats: { logins: 0, refreshes: 0, requests: 0, accountsProcessed: 0, queueDepth: 0, faultsInjected: 0 },
    now: () => new Date((tick += 1)),
  };
  const seen: Seen = { debtors: [], accounts: [], subs: [], events: [] };
  const seedingCalls: number[] = [];
  const written = (): number => seen.debtors.length + seen.accounts.length + seen.subs.length + seen.events.length;
  const listener: PortfolioListener = {
    debtor: (t, r) => void seen.debtors.push([t.lender, r]),
    account: (t, r) => void seen.accounts.push([t.lender, r]),
    subAccount: (t, r) => {
      if (failOn?.(r)) throw new Error('listener failure on purpose');
      seen.subs.push([t.lender, r]);
    },
    event: (t, r) => void seen.events.push([t.lender, r]),
    seeding: (apply) => {
      const before = written();
      apply();
      seedingCalls.push(written() - before);
    },
  };
  const module = createAccountsModule(ctx, listener);
  const call = async (index: 0 | 1, tenant: Tenant, body: unknown): Promise<RouteResponse> => {
    const route = module.routes[index];
    assert.ok(route);
    const req: RouteRequest = {
      method: 'POST', url: new URL(`https://x${route.pattern}`), params: { lenderPublicId: tenant.lenderPublicId },
      headers: {}, body, requestId: 'r', tenant,
    };
    // As the server does for an answer it sends as is.
    const response = await route.handler(req);
    response.commit?.();
    return response;
  };
  return { module, ctx, seen, seedingCalls, call };
}

const record = (patch: Record<string, unknown> = {}): Record<string, unknown> => ({
  status: 1, debtorCompanyId: 'C-1', firstName: 'Omar', lastName: 'Khan', language: 'en',
  accountId: 'A-1', subAccountId: 'S-1', principal: '100', ...patch,
});

const OK = { code: 200, message: 'success', body: 'Processing started successfully', errors: [] };

describe('accounts module', () => {
  it('declares both routes with accounts auth', () => {
    const { module } = harness();
    assert.deepEqual(module.routes.map((r) => [r.method, r.pattern, r.auth]), [
      ['POST', '/admin/v3/lenders/:lenderPublicId/accounts', 'accounts'],
      ['POST', '/admin/v3/lenders/:lenderPublicId/accounts/update-status', 'accounts'],
    ]);
  });

  it('accepts, queues, and applies in the background; drain resolves once applied', async () => {
    const { module, ctx, seen, call } = harness();
    const res = await call(0, demo, { accounts: [record({ paidAmount: '30' }), record({ status: 2, paidAmount: '50' })] });
    assert.deepEqual({ status: res.status, body: res.body }, { status: 200, body: OK });
    assert.equal(module.queueDepth(), 2);
    assert.equal(ctx.stats.queueDepth, 2);
    assert.equal(seen.subs.length, 0, 'nothing applied synchronously');
    await module.drain();
    assert.equal(module.queueDepth(), 0);
    assert.equal(ctx.stats.accountsProcessed, 2);
    assert.equal(ctx.stats.queueDepth, 0);
    assert.deepEqual(seen.subs.map(([, s]) => s.balance), ['70', '50']);
    assert.equal(seen.subs[0]?.[1].createdAt, '2026-10-01T00:00:00.001Z');
  });

  it('a 400 queues nothing of the request', async () => {
    const { module, ctx, seen, call } = harness();
    const res = await call(0, demo, { accounts: [record(), record({ accountId: 'A-2', principal: 12 })] });
    assert.deepEqual(res, {
      status: 400,
      body: { code: 400, message: null, body: '', errors: [{ accountId: 'A-2', errors: ['principal must be a valid number'] }] },
    });
    assert.equal(module.queueDepth(), 0);
    await module.drain();
    assert.equal(ctx.stats.accountsProcessed, 0);
    assert.equal(seen.events.length, 0);
  });

  it('a flag right after the push that creates its account is accepted and applied after it', async () => {
    const { module, seen, call } = harness();
    await call(0, demo, { accounts: [record()] });
    const flag = await call(1, demo, { accounts: [{ status: 5, debtorCompanyId: 'C-1', accountId: 'A-1' }] });
    assert.equal(flag.status, 200);
    await module.drain();
    assert.deepEqual(seen.events.map(([, e]) => e.type), ['created', 'disputed']);
    assert.equal(seen.accounts.at(-1)?.[1].disputed, true);
  });

  it('flags are per tenant: an account of demo is unknown to other', async () => {
    const { module, call } = harness();
    await call(0, demo, { accounts: [record()] });
    await module.drain();
    const res = await call(1, other, { accounts: [{ status: 6, debtorCompanyId: 'C-1', accountId: 'A-1' }] });
    assert.deepEqual(res.body, {
      code: 400, message: null, body: '', errors: [{ accountId: 'A-1', errors: ['account A-1 not found for debtor C-1'] }],
    });
    assert.equal(module.queueDepth(), 0);
  });

  it('records of two tenants are kept apart with their own ids', async () => {
    const { module, seen, call } = harness();
    await call(0, demo, { accounts: [record()] });
    await call(0, other, { accounts: [record({ principal: '7' })] });
    await module.drain();
    assert.deepEqual(seen.accounts.map(([t, a]) => [t, a.id, a.outstandingBalance]), [['demo', 1, '100'], ['other', 1, '7']]);
  });

  it('a failing listener does not stop the records behind it', async () => {
    const { module, ctx, seen, call } = harness(0, (sub) => sub.subAccountId === 'S-1');
    await call(0, demo, { accounts: [record(), record({ subAccountId: 'S-2' })] });
    await module.drain();
    assert.equal(ctx.stats.accountsFailed, 1);
    assert.equal(ctx.stats.accountsProcessed, 1);
    assert.deepEqual(seen.events.map(([, e]) => e.subAccountId), ['S-2']);
  });

  it('close() drops the backlog and releases drain', async () => {
    const { module, call } = harness();
    await call(0, demo, { accounts: [record()] });
    const drained = module.drain();
    module.close?.();
    await drained;
    assert.equal(module.queueDepth(), 0);
  });
});

describe('processing queue', () => {
  it('applies in order, in slices, and wakes every drain', async () => {
    const applied: number[] = [];
    const slices: number[] = [];
    let inSlice = 0;
    const queue = new ProcessingQueue<number>({
      apply: (n) => {
        if (inSlice === 0) setImmediate(() => { slices.push(inSlice); inSlice = 0; });
        inSlice += 1;
        applied.push(n);
      },
      onError: () => assert.fail('no error expected'),
      sliceSize: 3,
    });
    queue.enqueue([1, 2, 3, 4]);
    queue.enqueue([5, 6, 7]);
    assert.equal(queue.depth, 7);
    await Promise.all([queue.drain(), queue.drain()]);
    assert.deepEqual(applied, [1, 2, 3, 4, 5, 6, 7]);
    assert.ok(slices.every((n) => n <= 3), `slices ${slices.join(',')}`);
    assert.equal(queue.depth, 0);
    await queue.drain();
  });
});

describe('seeded portfolio', () => {
  function seed(scale: number, tenants: readonly Tenant[] = [demo, other]): Seen & { processed: number } {
    const { module, ctx, seen } = harness(scale);
    for (const tenant of tenants) module.seed(tenant);
    return { ...seen, processed: ctx.stats.accountsProcessed };
  }
  const only = (seen: Seen, lender: string): string => JSON.stringify(
    (['debtors', 'accounts', 'subs', 'events'] as const).map((kind) => (seen[kind] as [string, unknown][]).filter(([t]) => t === lender)),
  );

  it('is applied per tenant when first needed, once, all of it inside listener.seeding', async () => {
    const { module, ctx, seen, seedingCalls, call } = harness(200);
    module.start?.();
    module.serving?.();
    assert.equal(seen.subs.length, 0, 'nothing seeded at start');
    assert.equal(ctx.stats.portfolioSeeded, 0);
    // A push of demo seeds demo first, so the pushed record lands on the seeded portfolio.
    await call(0, demo, { accounts: [record({ debtorCompanyId: 'CUS-0000001', accountId: 'ACC-0000001', subAccountId: 'X-1' })] });
    const demoWrites = seedingCalls[0]!;
    assert.deepEqual(seedingCalls, [demoWrites]);
    assert.ok(seen.subs.length > 0 && seen.subs.every(([t]) => t === 'demo'));
    const seededOps = ctx.stats.portfolioSeeded;
    assert.ok(seededOps >= 200);
    await module.drain();
    const pushed = seen.accounts.at(-1)![1];
    assert.equal(pushed.accountId, 'ACC-0000001');
    assert.ok(pushed.subAccountCount >= 2, 'the pushed sub-account joined the seeded account');
    // A flag of other seeds other; neither is seeded again.
    const flag = await call(1, other, { accounts: [{ status: 5, debtorCompanyId: 'CUS-0000001', accountId: 'ACC-0000001' }] });
    assert.equal(flag.status, 200, 'the seeded account exists for the flag');
    module.seed(demo);
    module.seed(other);
    assert.equal(seedingCalls.length, 2);
    assert.equal(seen.subs.filter(([t]) => t === 'other').length > 0, true);
    assert.equal(ctx.stats.accountsProcessed, 1);
  });

  it('gives the same records whenever and in whichever order the tenants are seeded', () => {
    const together = seed(400);
    const reversed = seed(400, [other, demo]);
    for (const lender of ['demo', 'other']) assert.equal(only(reversed, lender), only(together, lender), lender);
    const demoOnly = seed(400, [demo]);
    assert.equal(only(demoOnly, 'demo'), only(together, 'demo'));
    assert.equal(only(demoOnly, 'other'), only(seed(0), 'other'));
  });

  it('creates min(scale, 20000) sub-accounts per tenant through the same processing', () => {
    const seen = seed(300);
    for (const lender of ['demo', 'other']) {
      const subs = new Map(seen.subs.filter(([t]) => t === lender).map(([, s]) => [s.id, s]));
      assert.equal(subs.size, 300, lender);
    }
    assert.equal(seen.processed, 0, 'seeding is not counted as records accepted by the endpoints');
  });

  it('has partial payments, withdrawals, disputes and do-not-contact, within DATA_SPAN and in order', () => {
    const seen = seed(2000);
    const latest = <T extends { id: number }>(rows: [string, T][]): T[] =>
      [...new Map(rows.filter(([t]) => t === 'demo').map(([, r]) => [r.id, r])).values()];
    const subs = latest(seen.subs);
    const accounts = latest(seen.accounts);
    const debtors = latest(seen.debtors);
    assert.ok(subs.some((s) => s.paidAmount !== undefined && s.balance !== '0.00' && s.balance !== s.principal), 'partially paid');
    assert.ok(subs.some((s) => s.balance === '0.00'), 'fully paid');
    assert.ok(subs.some((s) => s.status === 'withdrawn'), 'withdrawn');
    assert.ok(accounts.some((a) => a.disputed), 'disputed');
    assert.ok(accounts.some((a) => a.doNotContact), 'do-not-contact');
    assert.ok(accounts.some((a) => a.status === 'settled'));
    assert.ok(accounts.every((a) => a.subAccountCount >= 1 && a.subAccountCount <= 4));
    assert.ok(debtors.every((d) => d.phones.length > 0 && d.idNumber && d.birthDate));
    const stamps = seen.events.filter(([t]) => t === 'demo').map(([, e]) => e.createdAt);
    assert.deepEqual(stamps, [...stamps].sort(), 'events in timestamp order');
    assert.ok(stamps[0]! >= '2025-01-01T00:00:00.000Z' && stamps.at(-1)! < '2026-10-01T00:00:00.000Z');
    for (const a of accounts) {
      const mine = subs.filter((s) => s.accountId === a.accountId && s.debtorCompanyId === a.debtorCompanyId);
      assert.equal(mine.length, a.subAccountCount);
    }
  });

  it('same seed and scale give byte-identical records; tenants differ', () => {
    const a = seed(500);
    const b = seed(500);
    assert.equal(JSON.stringify(a), JSON.stringify(b));
    const demoFirst = a.debtors.find(([t]) => t === 'demo')?.[1];
    const otherFirst = a.debtors.find(([t]) => t === 'other')?.[1];
    assert.notDeepEqual({ ...demoFirst }, { ...otherFirst });
  });

  it('is capped at 20000 sub-accounts, so a huge --scale still starts quickly', () => {
    assert.equal(seededSubAccountCount(1_000_000), 20_000);
    assert.equal(seededSubAccountCount(20_001), 20_000);
    assert.equal(seededSubAccountCount(1234), 1234);
    assert.equal(seededSubAccountCount(0), 0);
  });
});
