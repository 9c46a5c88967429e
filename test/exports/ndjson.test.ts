// toNdjson: one line per row, and a synchronous burst of rows (an export page) joined into a few
// large chunks rather than one write per row, without holding back rows already written.
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { test } from 'node:test';
import { toNdjson } from '../../src/exports/ndjson.ts';

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
