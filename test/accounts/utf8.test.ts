// The strict chunked UTF-8 decoder (sources/utf8.ts) against TextDecoder's fatal mode, the
// reference: for any bytes cut into any chunks, valid input decodes to the same text, invalid
// input is refused, and the text given before the refusal is exactly the longest valid prefix.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { firstInvalidByte, StrictUtf8Decoder, unfinishedTail } from '../../src/accounts/sources/utf8.ts';

const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isValid(bytes: Uint8Array): boolean {
  try {
    fatal.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Mostly valid UTF-8 with some bytes flipped or cut, so both outcomes are common. */
const bytesArb = fc
  .tuple(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.array(fc.tuple(fc.nat(200), fc.integer({ min: 0, max: 255 })), { maxLength: 2 }),
    fc.nat(3),
  )
  .map(([text, flips, cut]) => {
    const bytes = Buffer.from(text, 'utf8');
    for (const [at, value] of flips) if (bytes.length > 0) bytes[at % bytes.length] = value;
    return bytes.subarray(0, Math.max(0, bytes.length - cut));
  });

function decodeInChunks(bytes: Uint8Array, cuts: number[]): { text: string; invalid: boolean } {
  const decoder = new StrictUtf8Decoder();
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let text = '';
  let from = 0;
  for (const to of [...points, bytes.length]) {
    // Each chunk in fresh memory that is then overwritten, as a reader reusing its buffer would.
    const chunk = Buffer.from(bytes.subarray(from, to));
    const out = decoder.decode(chunk);
    chunk.fill(0x41);
    text += out.text;
    if (out.invalid) return { text, invalid: true };
    from = to;
  }
  return { text, invalid: decoder.end().invalid };
}

describe('strict UTF-8 decoding', () => {
  it('firstInvalidByte agrees with TextDecoder: -1 exactly when valid, else the longest valid prefix ends there', () => {
    fc.assert(
      fc.property(bytesArb, (bytes) => {
        const bad = firstInvalidByte(bytes);
        assert.equal(bad === -1, isValid(bytes));
        if (bad === -1) return;
        assert.ok(isValid(bytes.subarray(0, bad)), 'the prefix before it is valid');
        // Any longer prefix holds the sequence starting there, cut short or wrong.
        for (let end = bad + 1; end <= Math.min(bytes.length, bad + 4); end++) {
          assert.ok(!isValid(bytes.subarray(0, end)), `bytes[0..${end}) are not valid`);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('decodes any chunking exactly as TextDecoder decodes the whole', () => {
    fc.assert(
      fc.property(bytesArb, fc.array(fc.nat(60), { maxLength: 8 }), (bytes, cuts) => {
        const got = decodeInChunks(bytes, cuts);
        if (isValid(bytes)) assert.deepEqual(got, { text: fatal.decode(bytes), invalid: false });
        else {
          assert.equal(got.invalid, true);
          const bad = firstInvalidByte(bytes);
          assert.equal(got.text, fatal.decode(bytes.subarray(0, bad)));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('carries a character split at the end of a chunk', () => {
    const euro = Buffer.from('€'); // e2 82 ac
    assert.equal(unfinishedTail(Buffer.concat([Buffer.from('ab'), euro.subarray(0, 2)])), 2);
    assert.equal(unfinishedTail(Buffer.concat([Buffer.from('ab'), euro])), 5);
    assert.equal(unfinishedTail(Buffer.from('ab')), 2);
    const decoder = new StrictUtf8Decoder();
    assert.deepEqual(decoder.decode(euro.subarray(0, 1)), { text: '', invalid: false });
    assert.deepEqual(decoder.decode(euro.subarray(1)), { text: '€', invalid: false });
    assert.deepEqual(decoder.end(), { invalid: false });
    assert.deepEqual(decoder.decode(euro.subarray(0, 2)), { text: '', invalid: false });
    assert.deepEqual(decoder.end(), { invalid: true });
  });
});
