// A large body does not hold up other clients: it is parsed and validated in slices with a turn
// of the event loop between them. Checked structurally (how much work runs between two turns,
// counted, not timed) and end to end over HTTPS with a generous bound on the event-loop delay
// that only a body handled in one piece comes near.
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { createAccountsModule } from '../../src/sandbox/accounts/index.ts';
import { validateAccount, validateRequestInSlices, VALIDATION_SLICE } from '../../src/sandbox/accounts/validate-account.ts';
import { createContext } from '../../src/sandbox/context.ts';
import type { PortfolioListener, Route } from '../../src/sandbox/contracts.ts';
import { parseInSlices, parseJsonBody, SLICE_CHARS, WHOLE_PARSE_CHARS } from '../../src/sandbox/json-body.ts';
import { resolveOptions } from '../../src/sandbox/options.ts';
import { requestJson, startTestSandbox, type Session, type TestSandbox } from '../helpers/sandbox.ts';

const MAX_BODY = 10 * 1024 * 1024;

function account(i: number): Record<string, unknown> {
  return {
    status: 1, debtorCompanyId: `LOOP-C-${i}`, firstName: 'Aisha', lastName: `Rahman ${i}`, language: 'en',
    phones: [{ number: '+971500000000', type: 'mobile' }], emails: [{ email: `loop${i}@example.com` }],
    addresses: [{ city: 'Dubai', country: 'ARE' }], birthDate: '15/06/1988',
    accountId: `LOOP-A-${i}`, subAccountId: `LOOP-A-${i}-1`, principal: '1000.50', dateDue: '01/03/2026', loanType: 1,
  };
}

/** `{"accounts":[1,1,...]}` of just under `bytes`. */
function onesBody(bytes: number): string {
  const count = Math.floor((bytes - '{"accounts":[]}'.length + 1) / 2);
  return `{"accounts":[${'1,'.repeat(count - 1)}1]}`;
}

/** Valid-looking accounts, as many as fit in `bytes`. */
function accountsBody(bytes: number, from = 0): { text: string; count: number } {
  const parts: string[] = [];
  let size = '{"accounts":[]}'.length;
  for (let i = from; ; i++) {
    const part = JSON.stringify(account(i));
    if (size + part.length + 1 > bytes) break;
    parts.push(part);
    size += part.length + 1;
  }
  return { text: `{"accounts":[${parts.join(',')}]}`, count: parts.length };
}

/** Counts turns of the event loop (setImmediate callbacks) until stopped. */
function turnCounter(): { count(): number; stop(): void } {
  let turns = 0;
  let timer: NodeJS.Immediate;
  const tick = (): void => {
    turns += 1;
    timer = setImmediate(tick);
  };
  timer = setImmediate(tick);
  return { count: () => turns, stop: () => clearImmediate(timer) };
}

describe('work between two turns of the event loop', () => {
  it('validation takes at most VALIDATION_SLICE elements per turn', async () => {
    const items = Array.from({ length: 25_000 }, (_, i) => account(i));
    let sinceTurn = 0;
    let most = 0;
    let turns = 0;
    const result = await validateRequestInSlices(
      { accounts: items },
      (raw) => {
        sinceTurn += 1;
        return validateAccount(raw);
      },
      {
        nextTurn: async () => {
          most = Math.max(most, sinceTurn);
          sinceTurn = 0;
          turns += 1;
        },
      },
    );
    most = Math.max(most, sinceTurn);
    assert.equal(result.ok, true);
    assert.ok(most <= VALIDATION_SLICE, `${most} elements ran in one turn`);
    assert.equal(turns, Math.ceil(items.length / VALIDATION_SLICE) - 1);
  });

  it('the account endpoints yield while they validate a large body, whatever its elements', async () => {
    const ctx = createContext(resolveOptions({ scale: 0 }));
    const noop = (): void => undefined;
    const listener: PortfolioListener = { debtor: noop, account: noop, subAccount: noop, event: noop, seeding: (apply) => apply() };
    const module = createAccountsModule(ctx, listener);
    const tenant = ctx.tenants[0]!;
    const call = async (route: Route, body: unknown): Promise<{ status: number; turns: number }> => {
      const counter = turnCounter();
      try {
        const res = await route.handler({
          method: 'POST', url: new URL(`https://sandbox.invalid${route.pattern}`), params: {}, headers: {},
          body, requestId: 'r', tenant,
        });
        return { status: res.status, turns: counter.count() };
      } finally {
        counter.stop();
      }
    };
    try {
      const [push, flag] = module.routes as [Route, Route];
      const valid = await call(push, { accounts: Array.from({ length: 20_000 }, (_, i) => account(i)) });
      assert.equal(valid.status, 200);
      assert.ok(valid.turns >= 20_000 / VALIDATION_SLICE - 1, `only ${valid.turns} turns while validating 20,000 records`);
      const ones = await call(push, { accounts: new Array(300_000).fill(1) });
      assert.equal(ones.status, 400);
      assert.ok(ones.turns >= 300_000 / VALIDATION_SLICE - 1, `only ${ones.turns} turns while validating 300,000 elements`);
      const flags = await call(flag, { accounts: new Array(300_000).fill({ status: 5, debtorCompanyId: 'C', accountId: 'A' }) });
      assert.equal(flags.status, 400);
      assert.ok(flags.turns >= 300_000 / VALIDATION_SLICE - 1, `only ${flags.turns} turns while validating 300,000 flags`);
    } finally {
      module.close?.();
    }
  });

  it('a body over WHOLE_PARSE_CHARS is tokenized SLICE_CHARS at a time', async () => {
    const text = onesBody(2 * 1024 * 1024);
    let turns = 0;
    const parsed = await parseJsonBody(Buffer.from(text), async () => {
      turns += 1;
    });
    assert.ok(parsed.ok);
    assert.equal((parsed.value as { accounts: number[] }).accounts.length, (text.length - 14) / 2);
    assert.ok(turns >= Math.ceil(text.length / SLICE_CHARS) - 1, `${turns} turns for ${text.length} characters`);

    let small = 0;
    const whole = await parseJsonBody(Buffer.from(onesBody(WHOLE_PARSE_CHARS)), async () => {
      small += 1;
    });
    assert.ok(whole.ok);
    assert.equal(small, 0, 'a body up to WHOLE_PARSE_CHARS is one JSON.parse');
  });

  it('the sliced parser reads what JSON.parse reads, and refuses what it refuses', async () => {
    const doc = JSON.stringify({
      accounts: [{ a: 'x"\\\n\u0001é😀محمد', b: [1, -2.5e-3, 1e400, 0, -0, true, false, null], c: {} }, [], '', { __proto__: 5 }],
      'k\u2028': '\ud83d\ude00'.repeat(50),
    });
    for (const slice of [1, 2, 3, 7, 64]) {
      assert.deepEqual(await parseInSlices(doc, async () => undefined, slice), { ok: true, value: JSON.parse(doc) }, `slice ${slice}`);
    }
    for (const bad of ['', ' ', '{', '[1,]', '{"a":1}x', '01', '{"a" 1}', '"\u0001"', 'nul', '[1] [2]', '\ufeff{}']) {
      assert.throws(() => JSON.parse(bad));
      assert.deepEqual(await parseInSlices(bad, async () => undefined, 2), { ok: false, reason: 'syntax' }, JSON.stringify(bad));
    }
  });
});

describe('other clients during a 10 MB accounts request', () => {
  let t: TestSandbox;
  let demo: Session;
  before(async () => {
    t = await startTestSandbox();
    demo = await t.loginAs('demo');
  });
  after(() => t.close());

  /** Posts `body` while another client reads the catalog in a loop; the worst event-loop delay
   * in between, the catalog reads' statuses and worst latency, and the post's answer. */
  async function alongside(body: string): Promise<{ status: number; answer: unknown; delayMs: number; reads: number[]; worstReadMs: number }> {
    const reader = new Agent({ connect: { ca: t.sandbox.ca } });
    const catalog = `/admin/v3/lenders/${demo.lenderPublicId}/exports/catalog`;
    await requestJson(reader, t.sandbox.authUrl, 'GET', catalog, { token: demo.token }); // connected before
    const delay = monitorEventLoopDelay({ resolution: 10 });
    const reads: number[] = [];
    let worstReadMs = 0;
    let posting = true;
    delay.enable();
    const readLoop = (async () => {
      while (posting) {
        const started = performance.now();
        const res = await requestJson(reader, t.sandbox.authUrl, 'GET', catalog, { token: demo.token });
        worstReadMs = Math.max(worstReadMs, performance.now() - started);
        reads.push(res.status);
      }
    })();
    try {
      const res = await t.request('POST', `/admin/v3/lenders/${demo.lenderPublicId}/accounts`, { token: demo.token, rawBody: body });
      await t.sandbox.drain(); // the background processing of what it queued counts too
      return { status: res.status, answer: res.body, delayMs: delay.max / 1e6, reads, worstReadMs };
    } finally {
      posting = false;
      await readLoop;
      delay.disable();
      await reader.close();
    }
  }

  // Handled in one piece, either body blocks the loop for 0.3 to 2 s on a 2-core machine; in
  // slices the worst turn is a few tens of ms. The bound leaves room for a loaded machine.
  const BOUND_MS = 1000;

  for (const [what, make] of [
    ['{"accounts":[1,1,1,…]}', () => ({ text: onesBody(MAX_BODY), count: 0 })],
    ['valid-looking accounts', () => accountsBody(MAX_BODY)],
  ] as const) {
    it(`${what}: the catalog keeps being served`, async (tc) => {
      const { text, count } = make();
      assert.ok(text.length > MAX_BODY - 1024 && text.length <= MAX_BODY);
      const run = await alongside(text);
      tc.diagnostic(`${what}: worst event-loop delay ${run.delayMs.toFixed(0)} ms, ${run.reads.length} catalog reads, worst ${run.worstReadMs.toFixed(0)} ms`);
      if (count === 0) {
        assert.equal(run.status, 400);
        assert.deepEqual(run.answer, { code: 400, message: null, body: '', errors: [{ accountId: '', errors: ['account must be an object'] }] });
      } else {
        assert.equal(run.status, 200);
      }
      assert.ok(run.reads.length > 0 && run.reads.every((s) => s === 200), `catalog reads: ${run.reads.join(',')}`);
      assert.ok(run.delayMs < BOUND_MS, `the event loop was blocked for ${run.delayMs.toFixed(0)} ms`);
    });
  }
});
