// D16's public_id is the case/link identifier and may repeat across deal rows (docs/service-contract.md). The
// boundary and lookback dedupe must tell such rows apart by content, and still drop a row that
// is read again unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exportRows, type ExportOptions } from '../../src/exports/export-stream.ts';
import { canonicalJson, contentRowKey, identityFor, rowKey } from '../../src/exports/highwater.ts';
import { memoryState } from '../../src/exports/state.ts';
import { FakeApi, makeRows, type FakeRow } from './fake-api.ts';

const NOW = () => new Date('2026-01-01T00:00:00Z');

async function collect(api: FakeApi, dataset: 'D07' | 'D16', opts: ExportOptions): Promise<FakeRow[]> {
  const out: FakeRow[] = [];
  for await (const row of exportRows(api, dataset, { now: NOW, ...opts })) out.push(row as FakeRow);
  return out;
}

test('the content identity ignores field order and tells rows with one public_id apart', () => {
  const a = { public_id: 'case-1', updated_at: 't', deal: { id: 1, amount: 5 } };
  const reordered = { deal: { amount: 5, id: 1 }, updated_at: 't', public_id: 'case-1' };
  assert.equal(canonicalJson(a), canonicalJson(reordered));
  assert.equal(contentRowKey(a), contentRowKey(reordered));
  assert.notEqual(contentRowKey(a), contentRowKey({ ...a, deal: { id: 2, amount: 5 } }));
  assert.match(contentRowKey(a), /^case-1#[0-9a-f]{16}$/, 'compact: the id plus 16 hex digits');
  assert.equal(identityFor('D16'), 'content');
  assert.equal(identityFor('D07'), 'key');
  assert.equal(rowKey(a), 'case-1');
});

test('D16: a second deal row with the same public_id and updated_at as the high-water row is delivered by the incremental load', async () => {
  const rows = makeRows(40).map((r, i) => ({ ...r, public_id: `case-${i}`, deal_id: `deal-${i}` }));
  const api = new FakeApi({ rows });
  const state = memoryState();
  assert.equal((await collect(api, 'D16', { state, limit: 10 })).length, 40);
  const hw = (await state.load('D16'))!.highWater!;
  const last = rows.at(-1)!;
  assert.equal(hw.value, last.updated_at);
  assert.ok(hw.ids.every((id) => /^case-\d+#[0-9a-f]{16}$/.test(id)), `compact ids in the state: ${hw.ids.join(',')}`);
  // Another deal of the same case, stamped at exactly the high-water value: the incremental load
  // re-reads the boundary (since is inclusive) and must drop only the rows it delivered already.
  const sibling = { ...last, deal_id: 'deal-sibling' };
  api.rows = [...rows, sibling];
  const second = await collect(api, 'D16', { state, limit: 10 });
  assert.deepEqual(second, [sibling]);
  assert.equal(api.queries.at(-1)!.since, hw.value, 'the boundary was re-read');
  assert.deepEqual(await collect(api, 'D16', { state, limit: 10 }), [], 'read again unchanged: dropped');
});

test('D16 with lookback: the lookback memory tells the sibling rows apart too', async () => {
  const rows = makeRows(30).map((r, i) => ({ ...r, public_id: `case-${i % 5}`, deal_id: `deal-${i}` }));
  const api = new FakeApi({ rows });
  const state = memoryState();
  assert.equal((await collect(api, 'D16', { state, lookback: { days: 2 } })).length, 30);
  assert.deepEqual(await collect(api, 'D16', { state, lookback: { days: 2 } }), []);
  const late = { ...rows.at(-2)!, deal_id: 'deal-late' };
  api.rows = [...rows, late];
  assert.deepEqual(await collect(api, 'D16', { state, lookback: { days: 2 } }), [late]);
});

test('datasets with a unique public_id keep plain ids in the state; rowIdentity overrides the default', async () => {
  const rows = makeRows(9);
  const state = memoryState();
  await collect(new FakeApi({ rows }), 'D07', { state });
  assert.deepEqual((await state.load('D07'))!.highWater!.ids.sort(), rows.slice(-3).map((r) => r.public_id).sort());
  const keyed = memoryState();
  await collect(new FakeApi({ rows }), 'D16', { state: keyed, rowIdentity: 'key' });
  assert.deepEqual((await keyed.load('D16'))!.highWater!.ids.sort(), rows.slice(-3).map((r) => r.public_id).sort());
});
