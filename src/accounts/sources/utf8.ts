// Strict UTF-8 decoding of a byte stream, chunk by chunk, that can say where the first bad byte
// is. TextDecoder's fatal mode refuses bad input but gives no position, and its streaming mode
// keeps the bytes of a character split between chunks out of sight; so the split character is
// carried here, each chunk's whole characters are decoded at once, and only after a refusal is
// the chunk walked byte by byte to find where the valid text ends.

// ignoreBOM keeps a U+FEFF in the text (each decode() call would otherwise drop one at the start
// of a chunk); a reader removes the document's leading BOM itself.
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export interface DecodedChunk {
  /** The valid text; when `invalid`, the text before the first bad byte. */
  text: string;
  /** The input is not UTF-8 right after `text`; nothing after it can be decoded. */
  invalid: boolean;
}

/** Index where a character left unfinished at the end of `bytes` starts, or bytes.length. */
export function unfinishedTail(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let back = 1; back <= 3 && back <= n; back++) {
    const b = bytes[n - back] as number;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: its lead is further back
    const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return length > back ? n - back : n;
  }
  return n;
}

/** Index of the first byte that does not start a valid UTF-8 sequence (WHATWG rules: no
 * overlongs, no surrogates, nothing above U+10FFFF, nothing cut short), or -1. */
export function firstInvalidByte(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i] as number;
    if (b < 0x80) {
      i += 1;
      continue;
    }
    let more: number;
    let low = 0x80;
    let high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) more = 1;
    else if (b === 0xe0) (more = 2), (low = 0xa0);
    else if (b === 0xed) (more = 2), (high = 0x9f);
    else if (b >= 0xe1 && b <= 0xef) more = 2;
    else if (b === 0xf0) (more = 3), (low = 0x90);
    else if (b >= 0xf1 && b <= 0xf3) more = 3;
    else if (b === 0xf4) (more = 3), (high = 0x8f);
    else return i;
    if (i + more >= n) return i;
    const second = bytes[i + 1] as number;
    if (second < low || second > high) return i;
    for (let k = 2; k <= more; k++) {
      const c = bytes[i + k] as number;
      if (c < 0x80 || c > 0xbf) return i;
    }
    i += more + 1;
  }
  return -1;
}

export class StrictUtf8Decoder {
  #carry: Uint8Array | undefined;

  decode(chunk: Uint8Array): DecodedChunk {
    const bytes = this.#carry === undefined ? chunk : Buffer.concat([this.#carry, chunk]);
    const cut = unfinishedTail(bytes);
    // A copy: the caller may reuse its chunk's memory once this returns.
    this.#carry = cut < bytes.length ? Uint8Array.prototype.slice.call(bytes, cut) : undefined;
    const whole = bytes.subarray(0, cut);
    try {
      return { text: strict.decode(whole), invalid: false };
    } catch {
      this.#carry = undefined;
      const bad = firstInvalidByte(whole);
      // bad is never -1 here (the decoder refused these bytes); 0 would do no harm either way.
      return { text: strict.decode(whole.subarray(0, Math.max(0, bad))), invalid: true };
    }
  }

  /** At the end of the input: whether a character was left unfinished. */
  end(): { invalid: boolean } {
    const invalid = this.#carry !== undefined;
    this.#carry = undefined;
    return { invalid };
  }
}
