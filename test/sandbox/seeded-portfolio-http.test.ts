// The seeded portfolio is applied per tenant when first needed, not at start. Over real HTTPS:
// whatever needs it first (a read of D01/D02/D03/D05, a push or a flag, the stats), and with or
// without a replica lag, the export shows the same seeded rows as a sandbox that seeded everything
// at once, and the stats count it the same.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { SandboxOptions } from '../../src/sandbox/contracts.ts';
import { startTestSandbox, type Session, type TestSandbox } from '../helpers/sandbox.ts';

const PORTFOLIO = ['S1/D01', 'S1/D02', 'S1/D03', 'S1/D05'] as const;
const OPTIONS = { seed: 7, scale: 150 } as const satisfies SandboxOptions;

const open: TestSandbox[] = [];
after(() => Promise.all(open.map((t) => t.close())));

async function sandbox(options: SandboxOptions = {}): Promise<{ t: TestSandbox; demo: Session; other: Session }> {
  const t = await startTestSandbox({ ...OPTIONS, ...options });
  open.push(t);
  return { t, demo: await t.loginAs('demo'), other: await t.loginAs('other') };
}

/** Every row of a dataset, all pages. */
async function allRows(t: TestSandbox, session: Session, path: string): Promise<unknown[]> {
  const rows: unknown[] = [];
  let cursor: string | null | undefined;
  do {
    const query = new URLSearchParams({ limit: '1000', ...(cursor ? { cursor } : {}) });
    const res = await t.request('GET', `/admin/v3/lenders/${session.lenderPublicId}/exports/${path}?${query}`, { token: session.token });
    assert.equal(res.status, 200, res.text);
    rows.push(...res.body.body.rows);
    cursor = res.body.body.pagination.nextCursor;
  } while (cursor);
  return rows;
}

/** The portfolio datasets of both lenders, other's first (so other is seeded before demo when
 * reads are what seed them). */
async function portfolioRows(t: TestSandbox, demo: Session, other: Session): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const [name, session] of [['other', other], ['demo', demo]] as const) {
    for (const path of PORTFOLIO) out[`${name} ${path}`] = await allRows(t, session, path);
  }
  return out;
}

describe('seeded portfolio, applied when first needed', () => {
  it('shows the same rows and stats whatever needs it first', async () => {
    // Seeded all at once, before any request, as a sandbox that seeded at start.
    const eager = await sandbox();
    const eagerStats = eager.t.sandbox.stats();
    assert.ok(eagerStats.portfolioSeeded! > 0);
    const expected = await portfolioRows(eager.t, eager.demo, eager.other);
    for (const [name, rows] of Object.entries(expected)) assert.ok(rows.length > 0, name);

    // Seeded by the reads themselves, one lender after the other.
    const byReads = await sandbox();
    assert.deepEqual(await portfolioRows(byReads.t, byReads.demo, byReads.other), expected);
    assert.equal(byReads.t.sandbox.stats().portfolioSeeded, eagerStats.portfolioSeeded);

    // Seeded by a refused flag (demo) and a refused push (other): nothing of them is applied.
    const byWrites = await sandbox();
    const flag = await byWrites.t.request('POST', `/admin/v3/lenders/${byWrites.demo.lenderPublicId}/accounts/update-status`, {
      token: byWrites.demo.token, body: { accounts: [{ status: 5, debtorCompanyId: 'NO-SUCH', accountId: 'NO-SUCH' }] },
    });
    assert.equal(flag.status, 400);
    const push = await byWrites.t.request('POST', `/admin/v3/lenders/${byWrites.other.lenderPublicId}/accounts`, {
      token: byWrites.other.token, body: { accounts: [{ status: 1 }] },
    });
    assert.equal(push.status, 400);
    assert.deepEqual(await portfolioRows(byWrites.t, byWrites.demo, byWrites.other), expected);
  });

  it('is in the replica from the start, even when first read after the sandbox serves', async () => {
    const lagging = await sandbox({ replicaLagMs: 60_000 });
    const eager = await sandbox();
    eager.t.sandbox.stats();
    assert.deepEqual(
      await portfolioRows(lagging.t, lagging.demo, lagging.other),
      await portfolioRows(eager.t, eager.demo, eager.other),
    );
  });

  it('is there for a flag of a seeded account sent first, and a push lands on top of it', async () => {
    const { t, demo } = await sandbox();
    const seeded = (await allRows(t, demo, 'S1/D02'))[0] as { debtor_company_id: string; account_id: string } | undefined;
    assert.ok(seeded !== undefined);
    const fresh = await sandbox();
    const flag = await fresh.t.request('POST', `/admin/v3/lenders/${fresh.demo.lenderPublicId}/accounts/update-status`, {
      token: fresh.demo.token, body: { accounts: [{ status: 5, debtorCompanyId: seeded.debtor_company_id, accountId: seeded.account_id }] },
    });
    assert.equal(flag.status, 200, flag.text);
    await fresh.t.sandbox.drain();
    const events = await allRows(fresh.t, fresh.demo, 'S1/D05') as { debtor_company_id: string; account_id: string; event_type: string }[];
    const mine = events.filter((e) => e.debtor_company_id === seeded.debtor_company_id && e.account_id === seeded.account_id);
    // Sorted by created_at: the seeded events (inside DATA_SPAN), then the dispute (stamped now).
    assert.equal(mine[0]?.event_type, 'created');
    assert.equal(mine.at(-1)?.event_type, 'disputed');
    const before = (await allRows(t, demo, 'S1/D05') as typeof events)
      .filter((e) => e.debtor_company_id === seeded.debtor_company_id && e.account_id === seeded.account_id);
    assert.deepEqual(mine.slice(0, -1), before, 'the seeded events, as in a sandbox that was only read');
  });
});
