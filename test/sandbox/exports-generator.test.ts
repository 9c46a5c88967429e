// The generated datasets and redaction, without a server: determinism, plausible D07 rows,
// deliberate ties, sibling-lender rows, masking rules, and advance replay.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DATA_SPAN } from '../../src/sandbox/contracts.ts';
import { advancePlan } from '../../src/sandbox/exports/advance-plan.ts';
import { GENERATED_CODES } from '../../src/sandbox/exports/generated-rows.ts';
import { GeneratedTable, ownRowTarget } from '../../src/sandbox/exports/generated-table.ts';
import { ipPrefix16, maskLast4, maskPhone, redact, yearOf } from '../../src/sandbox/exports/redact.ts';
import { ExportStore } from '../../src/sandbox/exports/store.ts';
import { expectedGeneratedRows } from '../../src/sandbox/exports/testing.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('the same seed and scale give byte-identical rows; seed and tenant change them', () => {
  for (const code of GENERATED_CODES) {
    const a = JSON.stringify(expectedGeneratedRows(7, 300, 0, code));
    assert.equal(JSON.stringify(expectedGeneratedRows(7, 300, 0, code)), a, code);
    assert.notEqual(JSON.stringify(expectedGeneratedRows(8, 300, 0, code)), a, code);
    assert.notEqual(JSON.stringify(expectedGeneratedRows(7, 300, 1, code)), a, code);
  }
});

test('each dataset has `scale` own rows (D26 at most 200) spread over DATA_SPAN, with ties', () => {
  for (const code of GENERATED_CODES) {
    const table = new GeneratedTable({ seed: 42, scale: 1000, tenantIndex: 0, code });
    const entries = table.index.entries();
    const own = entries.filter((e) => e.own);
    assert.equal(own.length, ownRowTarget(code, 1000), code);
    assert.equal(own.length, code === 'D26' ? 200 : 1000, code);
    assert.ok(entries.length > own.length, `${code} shares its store with a sibling lender`);
    assert.ok(entries[0]!.ts >= Date.parse(DATA_SPAN.start) && entries.at(-1)!.ts < Date.parse(DATA_SPAN.end), code);
    const months = new Set(entries.map((e) => new Date(e.ts).toISOString().slice(0, 7)));
    assert.ok(months.size >= 20, `${code} spans ${months.size} months`);
    const ties = entries.filter((e, i) => i > 0 && entries[i - 1]!.ts === e.ts).length;
    assert.ok(ties > entries.length * 0.05, `${code} has ${ties} tied timestamps`);
  }
});

test('D07 rows have exactly the documented fields and observed values', () => {
  const rows = expectedGeneratedRows(42, 2000, 0, 'D07');
  const keys = ['public_id', 'amount', 'settled_amount', 'payment_type', 'payment_status', 'is_settled',
    'paid_before_submission', 'paid_date', 'failure_reason', 'created_at', 'updated_at'];
  const statuses = new Set<unknown>();
  for (const row of rows) {
    assert.deepEqual(Object.keys(row), keys);
    assert.match(row.public_id as string, UUID);
    assert.ok(Number.isInteger(row.amount) && Number.isInteger(row.settled_amount));
    assert.equal(row.payment_type, 'PAID_TO_LENDER');
    assert.ok(['SUCCESS', 'PENDING', 'FAILED'].includes(row.payment_status as string));
    statuses.add(row.payment_status);
    assert.equal(typeof row.is_settled, 'boolean');
    assert.equal(typeof row.paid_before_submission, 'boolean');
    if (row.payment_status === 'FAILED') {
      assert.equal(row.paid_date, null);
      assert.equal(row.failure_reason, 'INSUFFICIENT_FUNDS');
    } else {
      assert.match(row.paid_date as string, ISO_MS);
      assert.equal(row.failure_reason, null);
    }
    assert.match(row.created_at as string, ISO_MS);
    assert.match(row.updated_at as string, ISO_MS);
    assert.ok((row.created_at as string) <= (row.updated_at as string));
  }
  assert.equal(statuses.size, 3);
  assert.equal(new Set(rows.map((r) => r.public_id)).size, rows.length, 'UUIDs are unique');
});

test('public_id rules: internal id strings, native ids, and D16 case ids that repeat', () => {
  for (const code of ['D17', 'D18', 'D19', 'D20', 'D21', 'D22', 'D23'] as const) {
    const rows = expectedGeneratedRows(42, 200, 0, code);
    assert.ok(rows.every((r) => /^\d+$/.test(r.public_id as string)), code);
    assert.equal(new Set(rows.map((r) => r.public_id)).size, rows.length, code);
  }
  const settlements = expectedGeneratedRows(42, 200, 0, 'D15');
  assert.ok(settlements.every((r) => /^STL-[0-9A-Z]{10}$/.test(r.public_id as string)));
  assert.equal(new Set(settlements.map((r) => r.public_id)).size, settlements.length);
  const deals = expectedGeneratedRows(42, 200, 0, 'D16');
  assert.ok(deals.every((r) => /^CASE-[0-9A-F]{12}$/.test(r.public_id as string)));
  assert.ok(new Set(deals.map((r) => r.public_id)).size < deals.length, 'some deals share a case id');
});

test('redaction keeps only allowlisted fields and masks by rule', () => {
  assert.equal(maskLast4('784-1987-1234567-1'), '*****67-1');
  assert.equal(maskLast4('P1234'), '*****1234');
  assert.equal(maskLast4('123'), '*****');
  assert.equal(yearOf('17/03/1987'), 1987);
  assert.equal(yearOf('1987-03-17'), 1987);
  assert.equal(yearOf('soon'), null);
  assert.equal(ipPrefix16('10.20.30.40'), '10.20.0.0/16');
  assert.equal(ipPrefix16('300.1.1.1'), null);
  assert.equal(maskPhone('+971501234567'), '+971******567');
  assert.equal(maskPhone('12345'), '***45');

  const users = new GeneratedTable({ seed: 42, scale: 50, tenantIndex: 0, code: 'D26' });
  const entry = users.index.entries().find((e) => e.own)!;
  const raw = users.raw(entry.id, entry.ts);
  const row = users.render(entry.id, entry.ts);
  assert.equal(row.id_number, `*****${(raw.id_number as string).slice(-4)}`);
  assert.equal(row.dob, Number((raw.dob as string).slice(0, 4)));
  const [a, b] = (raw.ip_address as string).split('.');
  assert.equal(row.ip_address, `${a}.${b}.0.0/16`);
  for (const internal of ['id', 'lender_id', 'email', 'password_hash']) {
    assert.ok(internal in raw, `raw D26 has ${internal}`);
    assert.ok(!(internal in row), `exported D26 has no ${internal}`);
  }

  const deals = new GeneratedTable({ seed: 42, scale: 50, tenantIndex: 0, code: 'D16' });
  const deal = deals.index.entries().find((e) => e.own)!;
  const rawDeal = deals.raw(deal.id, deal.ts);
  assert.ok('first_due_date_timestamp' in rawDeal && 'everReachedAttempted' in rawDeal);
  const dealRow = redact('D16', rawDeal);
  assert.ok(!('first_due_date_timestamp' in dealRow) && !('everReachedAttempted' in dealRow));

  const d01 = redact('D01', {
    id: 5, lender_id: 1000, public_id: '5', id_number: '784-1990-7654321-2', passport_number: 'N12345678', dob: '02/02/1990',
    language: 'ar', preferred_language: 'ar', phones: [{ number: '+971501112233', dnc: true }], emails: [{ email: 'a@b.c' }],
    addresses: [{ city: 'Dubai', street: '1 Road', country: 'ARE' }],
  });
  assert.deepEqual(d01.phones, [{ key_masked: '+971******233', dnc: true }]);
  assert.deepEqual(d01.addresses, [{ city: 'Dubai', area: null, country: 'ARE', type: null }]);
  assert.equal(d01.passport_number, '*****5678');
  assert.equal(d01.dob, 1990);
  assert.equal(d01.preferred_language, 'ar');
  assert.ok(!('emails' in d01) && !('lender_id' in d01) && !('id' in d01));
});

test('advance is deterministic, and a dataset built after advances equals one built before', () => {
  const target = { seed: 42, scale: 1000, tenantIndex: 0, datasetNumber: 7, ownRows: 1000, updatable: true };
  assert.deepEqual(advancePlan(target, 0), advancePlan(target, 0));
  assert.notDeepEqual(advancePlan(target, 0).updates, advancePlan(target, 1).updates);
  const plan = advancePlan(target, 0);
  assert.equal(new Set(plan.updates).size, plan.updates.length);
  assert.equal(advancePlan({ ...target, updatable: false }, 0).updates.length, 0);

  const eager = new ExportStore({ seed: 42, scale: 300, tenantIndexes: [0, 1] });
  const lazy = new ExportStore({ seed: 42, scale: 300, tenantIndexes: [0, 1] });
  const before = eager.generated(0, 'D07').index.entries();
  const t1 = Date.parse(DATA_SPAN.end) + 1000;
  const counts = eager.advance(t1);
  assert.deepEqual(lazy.advance(t1), counts);
  eager.advance(t1 + 5);
  lazy.advance(t1 + 5);
  assert.ok(counts.updated > 0 && counts.inserted > 0);

  const list = (store: ExportStore) => {
    const table = store.generated(0, 'D07');
    return table.index.entries().filter((e) => e.own).map((e) => JSON.stringify(table.render(e.id, e.ts)));
  };
  const eagerRows = list(eager);
  assert.deepEqual(list(lazy), eagerRows);
  const moved = eager.generated(0, 'D07').index.entries().filter((e) => e.ts >= t1);
  assert.ok(moved.length > 0);
  assert.ok(moved.length > before.filter((e) => e.ts >= t1).length);
});
