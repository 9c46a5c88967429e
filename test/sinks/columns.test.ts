// The columns of a database sink's tables (pure): types suggested by values, what fits a column,
// a table's shape as rows arrive, a row's values and misfits, and a page's rows by identity.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ExportRow } from '../../src/core/types.ts';
import { contentRowKey } from '../../src/exports/highwater.ts';
import {
  describeChange, fits, identityOf, initialColumns, keyColumn, latestByIdentity, rowValues, TableShape, typeOf, type ColumnNaming,
} from '../../src/sinks/columns.ts';
import { SinkError } from '../../src/sinks/errors.ts';
import type { SinkDataset } from '../../src/sinks/sink.ts';

const D07: SinkDataset = { code: 'D07', section: 'S2', key: 'D07', cursorField: 'updated_at', identity: 'key' };
const D16: SinkDataset = { code: 'D16', section: 'S3', key: 'D16', cursorField: 'updated_at', identity: 'content' };
const D05: SinkDataset = { code: 'D05', section: 'S1', key: 'D05', cursorField: 'created_at', identity: 'key' };

describe('types', () => {
  test('a value suggests a type; instants are the service\'s ISO form only', () => {
    assert.equal(typeOf(null), null);
    assert.equal(typeOf(12), 'bigint');
    assert.equal(typeOf(2 ** 53), 'double', 'beyond the exact integers');
    assert.equal(typeOf(1.5), 'double');
    assert.equal(typeOf(true), 'boolean');
    assert.equal(typeOf('2025-01-02T03:04:05Z'), 'timestamptz');
    assert.equal(typeOf('2025-01-02T03:04:05.123456789Z'), 'timestamptz');
    assert.equal(typeOf('2025-01-02 03:04:05'), 'text');
    assert.equal(typeOf('2025-13-02T03:04:05Z'), 'text', 'not a date');
    assert.equal(typeOf('03/06/2025'), 'text');
    assert.equal(typeOf([1]), 'json');
    assert.equal(typeOf({ a: 1 }), 'json');
  });

  test('what fits a column: null always, JSON anything, a double any finite number', () => {
    assert.ok(fits(null, 'bigint'));
    assert.ok(fits({ a: 1 }, 'json'));
    assert.ok(fits('x', 'json'));
    assert.ok(fits(3, 'double'));
    assert.ok(!fits(Number.POSITIVE_INFINITY, 'double'));
    assert.ok(!fits(1.5, 'bigint'));
    assert.ok(!fits(3, 'text'));
    assert.ok(!fits('2025-01-02', 'timestamptz'));
    assert.ok(fits('2025-01-02T00:00:00.000Z', 'timestamptz'));
  });
});

describe('a table\'s shape', () => {
  test('D07 starts with its documented columns; other datasets with their key and cursor', () => {
    const d07 = initialColumns(D07);
    assert.equal(d07.find((c) => c.name === 'amount')?.type, 'bigint');
    assert.equal(d07.find((c) => c.name === 'is_settled')?.type, 'boolean');
    assert.deepEqual(initialColumns(D05), [{ name: 'public_id', type: 'text' }, { name: 'created_at', type: 'timestamptz' }]);
    assert.deepEqual(initialColumns(D16).map((c) => c.name), ['_row_key', 'public_id', 'updated_at']);
    assert.equal(keyColumn(D07), 'public_id');
    assert.equal(keyColumn(D16), '_row_key');
  });

  test('new fields become columns when they first have a value; each misfit field is reported once', () => {
    const shape = new TableShape(initialColumns(D05));
    const first = shape.observe([{ public_id: 'a', created_at: '2025-01-01T00:00:00Z', note: null, n: 1 }]);
    assert.deepEqual(first, { added: [{ name: 'n', type: 'bigint' }], mismatched: [] });
    const second = shape.observe([{ public_id: 'b', note: 'x', n: 'one' }, { public_id: 'c', n: 'two', _mismatched: 5 }]);
    assert.deepEqual(second, { added: [{ name: 'note', type: 'text' }], mismatched: [{ name: 'n', column: 'bigint', seen: 'text' }] });
    assert.deepEqual(shape.observe([{ public_id: 'd', n: 'three' }]), { added: [], mismatched: [] }, 'told once');
    assert.deepEqual(describeChange('d05', second), [
      { kind: 'column-added', message: 'd05: new column note (text)' },
      { kind: 'type-changed', message: 'd05: n had a text value in a bigint column; such values are kept in _mismatched' },
    ]);
  });

  test('a field the store cannot name a column (ColumnNaming) gets none: told once, its values in _mismatched', () => {
    const lower: ColumnNaming = { key: (n) => (n === '' ? null : n.toLowerCase()), reason: (n, clash) => (clash === undefined ? `"${n}" is no name` : `${clash} has it`) };
    const shape = new TableShape(initialColumns(D05), lower);
    const first = shape.observe([{ public_id: 'a', N: null, n: 1, Public_ID: 'x', '': 2, _MISMATCHED: 3 }]);
    assert.deepEqual(first, {
      added: [{ name: 'n', type: 'bigint' }],
      mismatched: [],
      homeless: [{ name: 'Public_ID', reason: 'public_id has it' }, { name: '', reason: '"" is no name' }, { name: '_MISMATCHED', reason: '_mismatched has it' }],
    });
    // N was only null before n took its name; now it has a value.
    assert.deepEqual(shape.observe([{ public_id: 'b', N: 5, Public_ID: 'y' }]), { added: [], mismatched: [], homeless: [{ name: 'N', reason: 'n has it' }] });
    assert.deepEqual(shape.observe([{ public_id: 'c', N: 6, '': 7 }]), { added: [], mismatched: [] }, 'told once');
    assert.deepEqual(shape.homeless, ['Public_ID', '', '_MISMATCHED', 'N']);
    assert.deepEqual(rowValues({ public_id: 'c', n: 1, N: 6, '': null }, shape).mismatched, { N: 6 });
    assert.deepEqual(describeChange('d05', { added: [], mismatched: [], homeless: [{ name: 'N', reason: 'n has it' }] }), [
      { kind: 'no-column', message: 'd05: N gets no column (n has it); its values are kept in _mismatched' },
    ]);
  });

  test('a row\'s values: fitting ones in their columns, the others (and bookkeeping names) in _mismatched', () => {
    const shape = new TableShape([...initialColumns(D05), { name: 'n', type: 'bigint' }]);
    const { values, mismatched } = rowValues({ public_id: 'a', n: 'x', created_at: '2025-01-01T00:00:00Z', _row_key: 'k', gone: null }, shape);
    assert.deepEqual([...values], [['public_id', 'a'], ['created_at', '2025-01-01T00:00:00Z']]);
    assert.deepEqual(mismatched, { n: 'x', _row_key: 'k' });
    assert.equal(rowValues({ public_id: 'a', n: 1 }, shape).mismatched, null);
  });

  test('fields named like what every object has: a row holds them only when it has them, __proto__ included', () => {
    const rows = JSON.parse('[{"public_id":"a","toString":{"x":1},"constructor":"c","__proto__":5},{"public_id":"b"}]') as ExportRow[];
    const shape = new TableShape(initialColumns(D05));
    shape.observe(rows);
    assert.deepEqual(shape.columns.map((c) => c.name).filter((n) => n !== 'public_id' && n !== 'created_at'), ['toString', 'constructor', '__proto__']);
    const first = rowValues(rows[0]!, shape);
    assert.deepEqual(first.values.get('toString'), { x: 1 });
    assert.equal(first.values.get('constructor'), 'c');
    assert.equal(first.values.get('__proto__'), 5);
    const second = rowValues(rows[1]!, shape);
    assert.deepEqual([...second.values.keys()], ['public_id']);
    assert.equal(second.mismatched, null);
    // A misfit named __proto__ is kept as a field of _mismatched, not taken as its prototype.
    const misfit = rowValues(JSON.parse('{"public_id":"c","__proto__":"text","constructor":7}') as ExportRow, shape);
    assert.equal(JSON.stringify(misfit.mismatched), '{"__proto__":"text","constructor":7}');
  });
});

describe('a page by identity', () => {
  test('the identity is the public_id, or for a content identity a key of the whole row', () => {
    assert.equal(identityOf(D07, { public_id: 'p1', amount: 1 }), 'p1');
    const row = { public_id: 'CASE-1', stage: 'NEW' };
    assert.equal(identityOf(D16, row), contentRowKey(row));
    assert.notEqual(identityOf(D16, row), identityOf(D16, { ...row, stage: 'CLOSED' }));
    assert.equal(identityOf(D16, { stage: 'NEW', public_id: 'CASE-1' }), contentRowKey(row), 'field order does not matter');
    assert.equal(identityOf(D07, { amount: 1 }), undefined);
    assert.equal(identityOf(D07, { public_id: '' }), undefined);
    assert.equal(identityOf(D07, { public_id: 7 }), undefined);
  });

  test('each identity once, its last row in page order, in the order of last occurrences', () => {
    const rows = fc.array(fc.record({ public_id: fc.constantFrom('a', 'b', 'c', 'd'), v: fc.integer() }), { maxLength: 30 });
    fc.assert(fc.property(rows, (page) => {
      const latest = latestByIdentity(D07, page);
      const lastIndex = new Map<string, number>(page.map((r, i) => [r.public_id, i]));
      assert.deepEqual([...latest.keys()], [...lastIndex].sort((x, y) => x[1] - y[1]).map(([id]) => id));
      for (const [id, row] of latest) assert.equal(row, page[lastIndex.get(id)!]);
    }));
  });

  test('with cursor values, each identity keeps its newest version (ties: the later; no value is oldest), whatever the read order', () => {
    const at = fc.option(fc.constantFrom('2025-01-01T00:00:00Z', '2025-01-01T00:00:00.5Z', '2025-01-02T00:00:00Z', '2025-03-01T10:00:00.123456Z'), { nil: undefined });
    const rows = fc.array(fc.record({ public_id: fc.constantFrom('a', 'b', 'c'), updated_at: at, v: fc.integer() }, { requiredKeys: ['public_id', 'v'] }), { maxLength: 30 });
    fc.assert(fc.property(rows, (page) => {
      const latest = latestByIdentity(D07, page);
      const keptIndex = new Map<string, number>();
      page.forEach((r, i) => {
        const j = keptIndex.get(r.public_id);
        const was = j === undefined ? undefined : page[j]!.updated_at;
        if (j === undefined || was === undefined || (r.updated_at !== undefined && Date.parse(r.updated_at) >= Date.parse(was))) keptIndex.set(r.public_id, i);
      });
      assert.deepEqual([...latest.keys()], [...keptIndex].sort((x, y) => x[1] - y[1]).map(([id]) => id));
      for (const [id, row] of latest) assert.equal(row, page[keptIndex.get(id)!]);
    }));
    // A later window's newer version read before an earlier window's older one (ordered: false).
    const newer = { public_id: 'a', updated_at: '2025-02-01T00:00:00Z', v: 2 };
    assert.equal(latestByIdentity(D07, [newer, { public_id: 'a', updated_at: '2025-01-01T00:00:00Z', v: 1 }]).get('a'), newer);
  });

  test('a content identity keeps rows that share a public_id and merges identical ones', () => {
    const rows: ExportRow[] = [{ public_id: 'C', s: 1 }, { public_id: 'C', s: 2 }, { s: 1, public_id: 'C' }];
    assert.deepEqual([...latestByIdentity(D16, rows).values()], [{ public_id: 'C', s: 2 }, { s: 1, public_id: 'C' }]);
  });

  test('a row without a public_id cannot be stored by identity', () => {
    assert.throws(() => latestByIdentity(D07, [{ public_id: 'a' }, { id: 'b' }]), (e: unknown) => e instanceof SinkError && /D07 row has no public_id/.test(e.message));
  });
});
