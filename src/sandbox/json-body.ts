// Request bodies as JSON: strict UTF-8 (a bad byte is refused, never stored as U+FFFD), then
// JSON.parse for ordinary sizes and, for large bodies, stream-json's tokenizer fed in slices with
// a turn of the event loop between them, so a 10 MB body does not stall every other client.
// stream-json loads with the first body too large for one JSON.parse: a sandbox that never gets one
// (a REPL's, a notebook's) never loads it.
import type { Token } from 'stream-json/core/parser.js';
import { nextTurn as defaultNextTurn, type NextTurn } from '../core/next-turn.ts';

export type JsonBody =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: 'encoding' | 'syntax' };

/** Bodies up to this many characters go through one JSON.parse: a few milliseconds at most. */
export const WHOLE_PARSE_CHARS = 1024 * 1024;
/** Characters tokenized per turn for larger bodies (about 10 ms of work on a slow machine). */
export const SLICE_CHARS = 32 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

// stream-json's core tokenizer speaks stream-chain's protocol, whose markers are registered
// symbols: `none` ends the input, and several tokens come back wrapped as `many`.
const NONE = Symbol.for('object-stream.none');
const MANY = Symbol.for('object-stream.many');

function tokensOf(output: unknown): readonly Token[] {
  if (typeof output === 'object' && output !== null && MANY in output) return (output as unknown as { values: Token[] }).values;
  return [];
}

function decode(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Parses `text` a slice at a time; `nextTurn` runs between slices. */
export async function parseInSlices(text: string, nextTurn: NextTurn = defaultNextTurn, sliceChars = SLICE_CHARS): Promise<JsonBody> {
  const [{ default: Assembler }, { jsonParser }] = await Promise.all([
    import('stream-json/core/assembler.js'), import('stream-json/core/parser.js'),
  ]);
  const tokenize = jsonParser({ streamValues: false }) as unknown as (input: string | symbol) => unknown;
  const assembler = new Assembler();
  const feed = (input: string | symbol): void => {
    for (const token of tokensOf(tokenize(input))) assembler.consume(token);
  };
  try {
    for (let start = 0; start < text.length;) {
      let end = Math.min(text.length, start + sliceChars);
      // Never split a surrogate pair between two slices.
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end += 1;
      if (start > 0) await nextTurn();
      feed(text.slice(start, end));
      start = end;
    }
    feed(NONE);
  } catch {
    return { ok: false, reason: 'syntax' };
  }
  return assembler.done ? { ok: true, value: assembler.current } : { ok: false, reason: 'syntax' };
}

export async function parseJsonBody(bytes: Uint8Array, nextTurn: NextTurn = defaultNextTurn): Promise<JsonBody> {
  const text = decode(bytes);
  if (text === undefined) return { ok: false, reason: 'encoding' };
  if (text.length > WHOLE_PARSE_CHARS) return parseInSlices(text, nextTurn);
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, reason: 'syntax' };
  }
}
