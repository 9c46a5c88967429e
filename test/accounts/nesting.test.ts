// Records nested too deeply to serialise: the depth check (exact at the limit, bounded on cycles
// and million-level values), validation that refuses them on the fast path and zod's, the
// writer that rejects them instead of crashing, and a rejects file that still gets a line.
import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createAccountWriter } from '../../src/accounts/account-writer.ts';
import { createFlagWriter } from '../../src/accounts/flags.ts';
import { isNestedDeeperThan, MAX_RECORD_DEPTH, TOO_DEEP_MESSAGE } from '../../src/accounts/nesting.ts';
import { previewValue, PREVIEW_LENGTH } from '../../src/accounts/preview.ts';
import { rejectLine } from '../../src/accounts/rejects-sink.ts';
import { validateAccount, validateStatusUpdate } from '../../src/accounts/schema.ts';
import { SourceRecord } from '../../src/accounts/source-record.ts';
import type { RejectEvent } from '../../src/accounts/writer.ts';
import { account, FakeService } from './fake-service.ts';

/** `levels` objects nested inside one another: nest(1) is {"a":1}. Built without recursion. */
function nest(levels: number, key = 'a'): Record<string, unknown> {
  let value: Record<string, unknown> = { [key]: 1 };
  for (let i = 1; i < levels; i++) value = { [key]: value };
  return value;
}

function nestArrays(levels: number): unknown[] {
  let value: unknown[] = [];
  for (let i = 1; i < levels; i++) value = [value];
  return value;
}

/** The depth by JSON's own recursion (fine for the small values of the property test). */
function jsonDepth(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(jsonDepth));
}

describe('nesting depth', () => {
  it('is exact at the limit, for objects and arrays', () => {
    assert.equal(MAX_RECORD_DEPTH, 64);
    assert.equal(isNestedDeeperThan(nest(64)), false);
    assert.equal(isNestedDeeperThan(nest(65)), true);
    assert.equal(isNestedDeeperThan(nestArrays(64)), false);
    assert.equal(isNestedDeeperThan(nestArrays(65)), true);
    assert.equal(isNestedDeeperThan({ wide: Array.from({ length: 10_000 }, () => nest(10)) }), false);
    for (const scalar of [null, undefined, 1, 'x', true, 10n]) assert.equal(isNestedDeeperThan(scalar), false);
  });

  it('agrees with the depth JSON itself walks, for random values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 1, max: 12 }), (value, max) => {
        assert.equal(isNestedDeeperThan(value, max), jsonDepth(value) > max);
      }),
      { numRuns: 2000 },
    );
  });

  it('ends on a cycle and on a value a million levels deep', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    assert.equal(isNestedDeeperThan(cycle), true);
    assert.equal(isNestedDeeperThan(nestArrays(1_000_000)), true);
  });
});

describe('validation refuses records nested too deeply', () => {
  const base = account();
  const cases: Record<string, Record<string, unknown>> = {
    'additionalData (the fast path)': { ...base, additionalData: nest(64) },
    'an unknown field': { ...base, extra: nestArrays(200_000) },
    'a phone': { ...base, phones: [{ number: '1', more: nest(70) }] },
  };
  for (const [where, record] of Object.entries(cases)) {
    it(`in ${where}, in both modes, with one message`, () => {
      for (const strict of [false, true]) assert.deepEqual(validateAccount(record, { strict }), { ok: false, errors: [TOO_DEEP_MESSAGE] });
    });
  }

  it('accepts a record exactly at the limit (the record is level 1)', () => {
    const result = validateAccount({ ...base, additionalData: nest(63) });
    assert.ok(result.ok);
    assert.equal(TOO_DEEP_MESSAGE, 'record is nested too deeply (more than 64 levels)');
  });

  it('for status updates too', () => {
    const flag = { status: 5, debtorCompanyId: 'C', accountId: 'A', note: nest(100) };
    assert.deepEqual(validateStatusUpdate(flag), { ok: false, errors: [TOO_DEEP_MESSAGE] });
    assert.ok(validateStatusUpdate({ ...flag, note: nest(10) }).ok);
  });
});

describe('previews and rejects lines', () => {
  it('a preview is short, JSON-like, and never throws', () => {
    assert.equal(previewValue({ a: [1, 'x', null, true], b: { c: 2 } }), '{"a":[1,"x",null,true],"b":{"c":2}}');
    assert.equal(previewValue(new Date(0)), '"1970-01-01T00:00:00.000Z"');
    const deep = previewValue(nestArrays(1_000_000));
    assert.equal(deep, `${'['.repeat(PREVIEW_LENGTH)}…`);
    const cycle: Record<string, unknown> = { id: 'C-1' };
    cycle.self = cycle;
    assert.match(previewValue(cycle), /^\{"id":"C-1","self":\{"id":"C-1","self":\{/);
    assert.ok(previewValue(cycle).length <= PREVIEW_LENGTH + 1);
    assert.equal(previewValue({ n: 10n }), '{"n":10}');
    assert.equal(previewValue('x'.repeat(10_000)).length, PREVIEW_LENGTH + 1);
    const hostile = { ok: 1, get boom(): never { throw new Error('no') } };
    assert.equal(previewValue(hostile), '{"ok":1,"boom":…');
    const proxy = new Proxy({}, { ownKeys: () => { throw new Error('no keys'); } });
    assert.equal(previewValue(proxy), '{…');
  });

  it('a rejects line keeps the record when JSON can hold it, and a preview when it cannot', () => {
    const plain = { index: 0, line: 1, reason: 'invalid', errors: ['x'], record: { a: 1 } };
    assert.equal(rejectLine(plain), JSON.stringify(plain));
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const record of [nestArrays(300_000), nest(65), cycle, { n: 10n }, { get boom(): never { throw new Error('no') } }]) {
      const line = JSON.parse(rejectLine({ index: 3, element: 7, reason: 'malformed', errors: ['e'], record }));
      assert.deepEqual(Object.keys(line), ['index', 'element', 'reason', 'errors', 'recordPreview']);
      assert.equal(typeof line.recordPreview, 'string');
      assert.ok(line.recordPreview.length <= PREVIEW_LENGTH + 1);
    }
  });
});

describe('the writer and records it cannot serialise', () => {
  async function push(records: unknown[], flags = false) {
    const api = new FakeService();
    const rejectsOut = new PassThrough();
    let rejectsText = '';
    rejectsOut.on('data', (d: Buffer) => (rejectsText += d));
    const writer = flags
      ? createFlagWriter(api, { batchSize: 10, rejects: rejectsOut })
      : createAccountWriter(api, { batchSize: 10, rejects: rejectsOut });
    const events: RejectEvent[] = [];
    writer.on('reject', (r: RejectEvent) => events.push(r));
    await pipeline(Readable.from(records.map((r, i) => new SourceRecord(r, { line: i + 1 })), { objectMode: true }), writer);
    const lines = rejectsText.trimEnd().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
    return { api, summary: writer.summary, events, lines };
  }

  it('rejects a deep record (invalid) and a deep non-record (malformed), sends the rest, and writes a line for each', async () => {
    const first = account();
    const last = account();
    const { api, summary, events, lines } = await push([
      first,
      // additionalData early, so the preview (cut at its length) shows it.
      { status: 1, debtorCompanyId: 'C-0', additionalData: nest(50_000), ...account() },
      nestArrays(200_000),
      last,
    ]);
    assert.deepEqual(
      { ...summary, bytes: 0 },
      { received: 4, accepted: 2, rejected: 2, rejectedByReason: { invalid: 1, malformed: 1 }, batches: 1, requests: 1, retries: 0, bytes: 0 },
    );
    assert.deepEqual(api.sentRecords().map((r) => r.accountId), [first.accountId, last.accountId]);
    assert.deepEqual(events.map((e) => [e.line, e.reason, e.errors]), [
      [2, 'invalid', [TOO_DEEP_MESSAGE]],
      [3, 'malformed', [TOO_DEEP_MESSAGE]],
    ]);
    assert.deepEqual(lines.map((l) => [l.line, l.reason, l.errors, 'record' in l]), [
      [2, 'invalid', [TOO_DEEP_MESSAGE], false],
      [3, 'malformed', [TOO_DEEP_MESSAGE], false],
    ]);
    assert.match(lines[0].recordPreview, /^\{"status":1,"debtorCompanyId":"C-\d+",.*"additionalData":\{"a":\{"a":.*…$/);
    assert.equal(lines[1].recordPreview, `${'['.repeat(PREVIEW_LENGTH)}…`);
  });

  it('rejects a valid record JSON cannot write (a BigInt) instead of stopping', async () => {
    const { api, summary, events, lines } = await push([{ ...account(), additionalData: { n: 10n } }, account()]);
    assert.equal(api.sentRecords().length, 1);
    assert.deepEqual(summary.rejectedByReason, { invalid: 1 });
    assert.deepEqual(events[0]!.errors, ['record cannot be written as JSON: Do not know how to serialize a BigInt']);
    assert.deepEqual(lines[0].recordPreview.slice(0, 11), '{"status":1');
  });

  it('the flag writer rejects a deep status update too', async () => {
    const { api, summary, lines } = await push([
      { status: 'disputed', debtorCompanyId: 'C', accountId: 'A' },
      { status: 'disputed', debtorCompanyId: 'C', accountId: 'B', note: nest(100_000) },
    ], true);
    assert.equal(api.sentRecords().length, 1);
    assert.deepEqual(summary.rejectedByReason, { invalid: 1 });
    assert.deepEqual(lines.map((l) => [l.line, l.errors]), [[2, [TOO_DEEP_MESSAGE]]]);
  });
});
