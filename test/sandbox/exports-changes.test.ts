// Data that moves: POST /__sandbox/advance gives incremental loads something to find, and churn
// (writes during a walk) never makes an ascending walk skip a row.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { DATA_SPAN } from '../../src/sandbox/contracts.ts';
import { advancePlan } from '../../src/sandbox/exports/advance-plan.ts';
import { expectedGeneratedRows } from '../../src/sandbox/exports/testing.ts';
import { type Session, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const SEED = 5;
const SCALE = 600;

let t: TestSandbox;
let demo: Session;

before(async () => {
  t = await startTestSandbox({ seed: SEED, scale: SCALE });
  demo = await t.loginAs('demo');
});
after(() => t.close());

async function page(path: string, query: string): Promise<any> {
  const res = await t.request('GET', `/admin/v3/lenders/${demo.lenderPublicId}/exports/${path}?${query}`, { token: demo.token });
  assert.equal(res.status, 200, res.text);
  return res.body.body;
}

async function walk(path: string, query: string, onPage: (pages: number) => Promise<void> = async () => {}): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const body = await page(path, `${query}${cursor === null ? '' : `&cursor=${cursor}`}`);
    rows.push(...body.rows);
    cursor = body.pagination.nextCursor;
    await onPage(++pages);
  } while (cursor !== null);
  return rows;
}

test('advance updates and inserts rows that an incremental load from the stored maximum finds', async () => {
  const initial = expectedGeneratedRows(SEED, SCALE, 0, 'D07');
  const stored = initial.at(-1)!.updated_at as string;
  const res = await t.request('POST', '/__sandbox/advance');
  assert.equal(res.status, 200, res.text);
  assert.ok(res.body.updated > 0 && res.body.inserted > 0, res.text);

  const plan = advancePlan({ seed: SEED, scale: SCALE, tenantIndex: 0, datasetNumber: 7, ownRows: SCALE, updatable: true }, 0);
  const incremental = await walk('S2/D07', `since=${stored}&limit=100`);
  const fresh = incremental.filter((r) => r.updated_at >= DATA_SPAN.end);
  assert.equal(fresh.length, plan.updates.length + plan.inserts);
  assert.ok(incremental.some((r) => r.updated_at === stored), 'since is inclusive: the boundary row is read again');
  const known = new Set(initial.map((r) => r.public_id));
  assert.equal(fresh.filter((r) => known.has(r.public_id)).length, plan.updates.length, 'updated rows keep their public_id');
  // Generated rows are stamped in id order, so the k-th own row by id is the k-th by time.
  const expectedUpdated = new Set(plan.updates.map((k) => initial[k]!.public_id));
  assert.deepEqual(new Set(fresh.filter((r) => known.has(r.public_id)).map((r) => r.public_id)), expectedUpdated);

  const full = await walk('S2/D07', 'limit=250');
  assert.equal(full.length, SCALE + plan.inserts);
  assert.equal(new Set(full.map((r) => r.public_id)).size, full.length, 'an updated row moved instead of being duplicated');

  const logs = await walk('S4/D21', `since=${DATA_SPAN.end}&limit=100`);
  assert.ok(logs.length > 0 && logs.every((r) => r.communicated_at >= DATA_SPAN.end), 'logs only grow');
});

test('churn: an ascending walk during writes sees every row, later versions later', async () => {
  const bad = await t.request('POST', '/__sandbox/churn', { body: { rate: -1 } });
  assert.equal(bad.status, 400);
  const before = new Set((await walk('S2/D08', 'limit=1000')).map((r) => r.public_id));

  const setRate = async (rate: number): Promise<number> => {
    const res = await t.request('POST', '/__sandbox/churn', { body: { rate } });
    assert.equal(res.status, 200, res.text);
    return res.body.written;
  };
  const startedAt = await setRate(2000);
  const seen = await walk('S2/D08', 'limit=40', async (pages) => {
    if (pages === 3) {
      // Let writes land mid-walk, both behind and ahead of the walk's position.
      while ((await setRate(2000)) < startedAt + 100) await sleep(20);
    }
    if (pages === 200) await setRate(0); // make sure the walk can catch up with the tail
  });
  await setRate(0);

  const ids = seen.map((r) => r.public_id);
  for (const id of before) assert.ok(ids.includes(id), `row ${id} was skipped`);
  const lastStamp = new Map<string, string>();
  for (const row of seen) {
    const previous = lastStamp.get(row.public_id);
    if (previous !== undefined) assert.ok(row.updated_at > previous, `a repeated row is a newer version (${row.public_id})`);
    lastStamp.set(row.public_id, row.updated_at);
  }
  assert.ok(seen.length > before.size, 'the walk met churned rows');
});
