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
    assert.match((items[0] as MalformedRecord).message, /^line 1 is longer than 100 bytes/);
    assert.ok((items[0] as MalformedRecord).raw.length <= 201);
    assert.deepEqual(items[1]!.position, { line: 2 });
  });

  it('measures the line limit in bytes, the memory it bounds', async () => {
    // 60 characters, 120 bytes: over a 100-byte limit although under 100 characters.
    const { items } = await collect(readNdjson(pieces(`"${'é'.repeat(60)}"\n"${'e'.repeat(60)}"\n`, 7), { maxLineLength: 100 }));
    assert.match((items[0] as MalformedRecord).message, /^line 1 is longer than 100 bytes/);
    assert.deepEqual(values(items.slice(1)), ['e'.repeat(60)]);
  });
});

/** A JSON record whose text holds `bad` bytes inside a string value. */
function withBytes(prefix: string, bad: number[], suffix: string): Buffer {
  return Buffer.concat([Buffer.from(prefix), Buffer.from(bad), Buffer.from(suffix)]);
}

async function* bytePieces(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

// Byte sequences TextDecoder's fatal mode refuses, each a different rule of UTF-8.
const BAD_SEQUENCES: Record<string, number[]> = {
  'a lone 0xff': [0xff],
  'a lead byte without its continuation': [0xc3, 0x28],
  'an encoded surrogate': [0xed, 0xa0, 0x80],
  'an overlong slash': [0xc0, 0xaf],
  'above U+10FFFF': [0xf4, 0x90, 0x80, 0x80],
  'a stray continuation byte': [0x80],
};

describe('NDJSON source: strict UTF-8', () => {
  for (const [name, bad] of Object.entries(BAD_SEQUENCES)) {
    it(`rejects a line holding ${name} as malformed, with its line number, and reads on`, async () => {
      const bytes = Buffer.concat([Buffer.from('{"a":"é"}\n'), withBytes('{"b":"x', bad, 'y"}\n'), Buffer.from('{"c":"ü"}\n')]);
      for (const size of [1, 2, 3, 5, 4096]) {
        const { items, error } = await collect(readNdjson(bytePieces(bytes, size)));
        assert.equal(error, undefined);
        assert.equal(items.length, 3, `chunks of ${size}`);
        const bad2 = items[1] as MalformedRecord;
        assert.ok(bad2 instanceof MalformedRecord, `chunks of ${size}: ${JSON.stringify(values(items))}`);
        assert.equal(bad2.message, 'line 2 is not valid UTF-8');
        assert.deepEqual(bad2.position, { line: 2 });
        assert.match(bad2.raw, /^\{"b":"x/);
        assert.deepEqual([values(items)[0], values(items)[2]], [{ a: 'é' }, { c: 'ü' }]);
      }
    });
  }

  it('rejects a last line cut inside a character', async () => {
    const { items } = await collect(readNdjson(bytePieces(Buffer.concat([Buffer.from('{"a":1}\n"x'), Buffer.from([0xe2, 0x82])]), 3)));
    assert.equal(items.length, 2);
    assert.equal((items[1] as MalformedRecord).message, 'line 2 is not valid UTF-8');
  });

  it('keeps valid multi-byte text whole however it is chunked, U+FFFD written as such included', async () => {
    const text = '{"a":"é€😀\uFFFD"}\n\uFEFF{"b":"\uFEFF"}\n';
    for (const size of [1, 2, 3, 7]) {
      const { items } = await collect(readNdjson(bytePieces(Buffer.from(text), size)));
      assert.deepEqual(items.map((i) => i instanceof SourceRecord), [true, false], `chunks of ${size}`);
      assert.deepEqual((items[0] as SourceRecord).value, { a: 'é€😀\uFFFD' });
    }
    // A BOM is dropped at the start of the file only; on line 2 it is bad JSON, not skipped.
    const { items } = await collect(readNdjson(bytePieces(Buffer.from(`\uFEFF${text}`), 4)));
    assert.deepEqual((items[0] as SourceRecord).value, { a: 'é€😀\uFFFD' });
    assert.match((items[1] as MalformedRecord).message, /^line 2 is not valid JSON/);
  });

  it('says a UTF-16 file is UTF-16', async () => {
    const { items } = await collect(readNdjson(bytePieces(Buffer.from('\uFEFF{"a":1}\n', 'utf16le'), 64)));
    assert.match((items[0] as MalformedRecord).message, /^line 1 is not valid UTF-8 \(.*UTF-16/);
  });
});

describe('JSON source: strict UTF-8', () => {
  for (const [name, bad] of Object.entries(BAD_SEQUENCES)) {
    it(`stops at ${name} with its position, after the elements before it`, async () => {
      const bytes = withBytes('[{"a":"é"},\n {"b":"€', bad, '"}, {"c":3}]');
      for (const size of [1, 2, 3, 5, 4096]) {
        const { items, error } = await collect(readJson(bytePieces(bytes, size)));
        assert.deepEqual(values(items), [{ a: 'é' }], `chunks of ${size}`);
        assert.ok(error instanceof JsonSourceError, `chunks of ${size}: ${String(error)}`);
        // Characters, not bytes: 'é' and '€' are one column each.
        assert.deepEqual(error.position, { line: 2, column: 9, offset: 20 });
        assert.equal(error.elementsRead, 1);
        assert.equal(
          error.message,
          'the JSON document is not valid UTF-8 at line 2, column 9 (character 20); 1 element(s) were read before it, nothing after it',
        );
      }
    });
  }

  it('stops at a character cut short by the end of the input', async () => {
    const { items, error } = await collect(readJson(bytePieces(Buffer.concat([Buffer.from('[1,"'), Buffer.from([0xf0, 0x9f, 0x98])]), 2)));
    assert.deepEqual(values(items), [1]);
    assert.ok(error instanceof JsonSourceError);
    assert.deepEqual(error.position, { line: 1, column: 5, offset: 4 });
    assert.match(error.message, /not valid UTF-8/);
  });

  it('reads valid multi-byte text split anywhere', async () => {
    const doc = '\uFEFF{"accounts":[{"a":"é€😀\uFFFD"},{"b":"\uFEFF"}]}';
    for (const size of [1, 2, 3, 5]) {
      const { items, error } = await collect(readJson(bytePieces(Buffer.from(doc), size)));
      assert.equal(error, undefined);
      assert.deepEqual(values(items), [{ a: 'é€😀\uFFFD' }, { b: '\uFEFF' }], `chunks of ${size}`);
    }
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

describe('the input behind a source', () => {
  it('is closed when the reader stops early, in both formats', async () => {
    for (const format of ['json', 'ndjson'] as const) {
      let closed = false;
      async function* input(): AsyncGenerator<Buffer> {
        try {
          yield Buffer.from(format === 'json' ? '[{"a":1},' : '{"a":1}\n');
          for (let i = 0; i < 1000; i += 1) yield Buffer.from(format === 'json' ? '{"a":2},' : '{"a":2}\n');
        } finally {
          closed = true;
        }
      }
      for await (const record of readRecords(input())) {
        assert.ok(record !== undefined);
        break;
      }
      assert.equal(closed, true, `${format}: the input was left open`);
    }
  });
});
