// Record sources: NDJSON with line numbers that reads past bad lines, streamed JSON documents that
// report a syntax error's position, and format detection from the first bytes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectFormat } from '../../src/accounts/sources/detect-format.ts';
import { JsonSourceError, readJson } from '../../src/accounts/sources/json.ts';
import { readNdjson } from '../../src/accounts/sources/ndjson.ts';
import { readRecords } from '../../src/accounts/sources/read-records.ts';
import { MalformedRecord, SourceRecord } from '../../src/accounts/source-record.ts';

/** Bytes in small pieces, so records, lines and multi-byte characters straddle chunks. */
async function* pieces(text: string, size = 5): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

type Item = SourceRecord | MalformedRecord;
async function collect(source: AsyncIterable<Item>): Promise<{ items: Item[]; error?: unknown }> {
  const items: Item[] = [];
  try {
    for await (const item of source) items.push(item);
    return { items };
  } catch (error) {
    return { items, error };
  }
}
const values = (items: Item[]) => items.map((i) => (i instanceof SourceRecord ? i.value : i.message));

describe('NDJSON source', () => {
  it('yields each line with its 1-based line number, skipping blank lines, CRLF and a BOM', async () => {
    const { items } = await collect(readNdjson(pieces('\uFEFF{"a":"é"}\r\n\n  \n{"b":2}\n[3]\nnull')));
    assert.deepEqual(values(items), [{ a: 'é' }, { b: 2 }, [3], null]);
    assert.deepEqual(items.map((i) => i.position.line), [1, 4, 5, 6]);
  });

  it('reports a malformed line with its number and goes on', async () => {
    const { items, error } = await collect(readNdjson(pieces('{"a":1}\n{"b":\n{"c":3}\n')));
    assert.equal(error, undefined);
    assert.equal(items.length, 3);
    const bad = items[1] as MalformedRecord;
    assert.ok(bad instanceof MalformedRecord);
    assert.equal(bad.position.line, 2);
    assert.equal(bad.raw, '{"b":');
    assert.match(bad.message, /^line 2 is not valid JSON: /);
    assert.deepEqual((items[2] as SourceRecord).value, { c: 3 });
  });

  it('reports an over-long line without holding it, and reads the next one', async () => {
    const long = `{"x":"${'y'.repeat(500)}"}`;
    const { items } = await collect(readNdjson(pieces(`${long}\n{"ok":1}\n`, 64), { maxLineLength: 100 }));
    assert.equal(items.length, 2);
    assert.match((items[0] as MalformedRecord).message, /^line 1 is longer than 100 characters/);
    assert.ok((items[0] as MalformedRecord).raw.length <= 201);
    assert.deepEqual(items[1]!.position, { line: 2 });
  });
});

describe('JSON source', () => {
  it('streams a top-level array with element indexes', async () => {
    const { items, error } = await collect(readJson(pieces(' [{"a":1}, 2, null, {"b":[1,{"c":"ü"}]}]')));
    assert.equal(error, undefined);
    assert.deepEqual(values(items), [{ a: 1 }, 2, null, { b: [1, { c: 'ü' }] }]);
    assert.deepEqual(items.map((i) => i.position.element), [0, 1, 2, 3]);
  });

  it('streams the accounts array of {"accounts": [...]}, ignoring other keys', async () => {
    const { items, error } = await collect(readJson(pieces('{"meta":{"accounts":[9]},"accounts":[{"a":1},{"accounts":[2]}],"z":1}')));
    assert.equal(error, undefined);
    assert.deepEqual(values(items), [{ a: 1 }, { accounts: [2] }]);
  });

  it('yields the elements before a syntax error, then says where it is', async () => {
    const { items, error } = await collect(readJson(pieces('[{"a":1},\n {"b":2},\n {"c": x}, {"d":4}]')));
    assert.deepEqual(values(items), [{ a: 1 }, { b: 2 }]);
    assert.ok(error instanceof JsonSourceError);
    assert.deepEqual(error.position, { line: 3, column: 8, offset: 27 });
    assert.equal(error.elementsRead, 2);
    assert.match(error.message, /^JSON syntax error at line 3, column 8 \(character 27\): .*2 element\(s\) were read before it, nothing after it/);
  });

  it('says where a truncated document ends', async () => {
    const { items, error } = await collect(readJson(pieces('{"accounts":[{"a":1},\n{"b"')));
    assert.deepEqual(values(items), [{ a: 1 }]);
    assert.ok(error instanceof JsonSourceError);
    assert.deepEqual(error.position, { line: 2, column: 5, offset: 26 });
    assert.match(error.message, /ends early at line 2, column 5/);
  });

  it('refuses a document of another shape', async () => {
    for (const text of ['{"records": []}', '{"accounts": 5}', '"x"']) {
      const { items, error } = await collect(readJson(pieces(text)));
      assert.equal(items.length, 0);
      assert.ok(error instanceof JsonSourceError, text);
      assert.match(error.message, /accounts/);
    }
  });
});

describe('format detection', () => {
  it('tells JSON from NDJSON by the first bytes', () => {
    assert.equal(detectFormat('  [', false), 'json');
    assert.equal(detectFormat('\uFEFF{\n  "accounts" : [', false), 'json');
    assert.equal(detectFormat('{"status":1', false), 'ndjson');
    assert.equal(detectFormat('{"accounts": 5}', false), 'ndjson');
    assert.equal(detectFormat('{"acc', false), undefined);
    assert.equal(detectFormat('{"acc', true), 'ndjson');
    assert.equal(detectFormat('   ', false), undefined);
    assert.equal(detectFormat('', true), 'ndjson');
    assert.equal(detectFormat('garbage', false), 'ndjson');
  });

  it('replays the sniffed bytes into the chosen reader', async () => {
    const json = await collect(readRecords(pieces('\n\n  {"accounts": [{"a":1},{"a":2}]}', 3)));
    assert.deepEqual(values(json.items), [{ a: 1 }, { a: 2 }]);
    const ndjson = await collect(readRecords(pieces('{"a":1}\n{"a":2}\n', 3)));
    assert.deepEqual(values(ndjson.items), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(ndjson.items.map((i) => i.position.line), [1, 2]);
    const forced = await collect(readRecords(pieces('[1]'), { format: 'ndjson' }));
    assert.deepEqual(values(forced.items), [[1]]);
  });
});
