// toNdjson: one line per row, and a synchronous burst of rows (an export page) joined into a few
// large chunks rather than one write per row, without holding back rows already written.
// ndjsonBytes: a page's rows as the UTF-8 bytes of one write.
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { test } from 'node:test';
import fc from 'fast-check';
import { ndjsonBytes, toNdjson } from '../../src/exports/ndjson.ts';

/** What ndjsonBytes must equal: each row's JSON and a newline, joined, encoded once. */
const joined = (rows: readonly unknown[]): Buffer => Buffer.from(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));

test('ndjsonBytes: the bytes of the joined lines, for any rows (any UTF-16, lone surrogates included)', () => {
  // Every UTF-16 code unit, so lone surrogates, astral characters and 3-byte characters all occur.
  const anyText = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)), maxLength: 40 });
  const row = fc.oneof(fc.jsonValue({ stringUnit: 'binary', maxDepth: 2 }), fc.dictionary(anyText, anyText, { maxKeys: 5 }));
  fc.assert(
    fc.property(fc.array(row, { maxLength: 60 }), (rows) => {
      assert.deepEqual(ndjsonBytes(rows), joined(rows));
    }),
    { numRuns: 500 },
  );
});

test('ndjsonBytes: rows of multi-byte text only grow the buffer and still give the joined bytes', () => {
  const rows = Array.from({ length: 1000 }, (_, i) => ({ id: i, name: '\u0416\u4e2d\ud83d\ude00'.repeat(1 + (i % 7)) }));
  const bytes = ndjsonBytes(rows);
  assert.deepEqual(bytes, joined(rows));
  assert.equal(bytes.toString('utf8').split('\n').length, 1001);
  assert.deepEqual(ndjsonBytes([]), Buffer.alloc(0));
  assert.deepEqual(ndjsonBytes([{ a: 'x'.repeat(100_000) }]), joined([{ a: 'x'.repeat(100_000) }]));
});

function chunksOf(transform: ReturnType<typeof toNdjson>): string[] {
  const chunks: string[] = [];
  transform.on('data', (chunk: Buffer | string) => chunks.push(String(chunk)));
  return chunks;
}

test('a burst of rows written at once becomes one chunk, every row a line', async () => {
  const t = toNdjson();
  const chunks = chunksOf(t);
  const rows = Array.from({ length: 1000 }, (_, i) => ({ id: i, name: `row ${i}` }));
  for (const row of rows) t.write(row);
  await tick();
  assert.equal(chunks.length, 1);
  assert.equal(chunks[0], rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  t.end();
});

test('a row on its own is sent without waiting for more', async () => {
  const t = toNdjson();
  const chunks = chunksOf(t);
  t.write({ a: 1 });
  await tick();
  assert.deepEqual(chunks, ['{"a":1}\n']);
  t.write({ a: 2 });
  await tick();
  assert.deepEqual(chunks, ['{"a":1}\n', '{"a":2}\n']);
  t.end();
});

test('chunks stay near 64 KiB for a large burst, in order, and end() flushes the rest', async () => {
  const t = toNdjson();
  const chunks = chunksOf(t);
  const rows = Array.from({ length: 5000 }, (_, i) => ({ id: i, pad: 'x'.repeat(100) }));
  for (const row of rows) t.write(row);
  t.end({ id: 'last' });
  await new Promise((resolve) => t.on('end', resolve));
  assert.ok(chunks.length > 1 && chunks.length < 20, `${chunks.length} chunks`);
  for (const chunk of chunks) assert.ok(chunk.length < 64 * 1024 + 200);
  assert.equal(chunks.join(''), [...rows, { id: 'last' }].map((r) => `${JSON.stringify(r)}\n`).join(''));
});
