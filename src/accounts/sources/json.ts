// Records from one JSON document, streamed with stream-json so a multi-GB file is never held whole:
// a top-level array of records, or the endpoint's own body shape `{"accounts": [...]}`.
//
// A syntax error cannot be read past: JSON has no record boundaries to resume at. The elements
// before it are yielded, then JsonSourceError says where it is (line, column, character offset)
// and how many elements were read; nothing after it is. stream-json's parser does not give
// positions, so its verifier runs over the same text a step ahead and supplies them.
//
// Bytes that are not UTF-8 end the document the same way, with their position: they are decoded
// strictly (utf8.ts) instead of turning into U+FFFD, which would change a record silently.
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { parser } from 'stream-json';
import { pick } from 'stream-json/filters/pick.js';
import { streamArray } from 'stream-json/streamers/stream-array.js';
import { jsonVerifier } from 'stream-json/utils/verifier.js';
import { SourceRecord } from '../source-record.ts';
import { StrictUtf8Decoder } from './utf8.ts';
import { replay } from './replay.ts';

/** Where in a JSON document reading stopped: line, column and character offset. */
export interface JsonErrorPosition {
  /** 1-based. */
  line: number;
  /** 1-based, in characters. */
  column: number;
  /** 0-based character offset from the start of the document. */
  offset: number;
}

/** The document cannot be read further; `elementsRead` elements before the problem were yielded. */
export class JsonSourceError extends Error {
  override name = 'JsonSourceError';
  constructor(
    message: string,
    readonly elementsRead: number,
    readonly position?: JsonErrorPosition,
  ) {
    super(message);
  }
}

interface VerifierFailure extends Error {
  line: number;
  pos: number;
  offset: number;
}

function isVerifierFailure(error: unknown): error is VerifierFailure {
  return error instanceof Error && typeof (error as Partial<VerifierFailure>).offset === 'number';
}

/** Text of the document, checked by the verifier; stops just before a syntax error or a byte
 * that is not UTF-8 so the parser yields every element before it, and records where it was. */
class VerifiedText {
  failure: VerifierFailure | undefined;
  /** Where the first byte that is not UTF-8 is (the text before it was read). */
  encodingFailure: JsonErrorPosition | undefined;
  offset = 0;
  line = 1;
  lineStart = 0;

  async *read(input: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
    const verify = jsonVerifier();
    const decoder = new StrictUtf8Decoder();
    let first = true;
    for await (const chunk of input) {
      // Text chunks (a stream with an encoding set) were decoded by someone else already.
      const decoded = typeof chunk === 'string' ? { text: chunk, invalid: false } : decoder.decode(chunk);
      let text = decoded.text;
      if (first && text !== '') {
        text = text.replace(/^\uFEFF/, '');
        first = false;
      }
      if (text !== '') {
        try {
          verify(text);
        } catch (error) {
          if (!isVerifierFailure(error)) throw error;
          this.failure = error;
          const good = text.slice(0, Math.max(0, error.offset - this.offset));
          if (good !== '') yield good;
          return;
        }
        this.#advance(text);
        yield text;
      }
      if (decoded.invalid) {
        this.encodingFailure = this.endPosition();
        return;
      }
    }
    if (decoder.end().invalid) this.encodingFailure = this.endPosition();
  }

  #advance(text: string): void {
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
      this.line += 1;
      this.lineStart = this.offset + i + 1;
    }
    this.offset += text.length;
  }

  /** Where the text ended, for a document that stops early. */
  endPosition(): JsonErrorPosition {
    return { line: this.line, column: this.offset - this.lineStart + 1, offset: this.offset };
  }
}

function describe(position: JsonErrorPosition): string {
  return `line ${position.line}, column ${position.column} (character ${position.offset})`;
}

/** The text chunks read up to the first non-space character, and that character ('' at the end). */
async function peekFirstCharacter(text: AsyncIterator<string>): Promise<{ head: string[]; first: string }> {
  const head: string[] = [];
  for (;;) {
    const next = await text.next();
    if (next.done === true) return { head, first: '' };
    head.push(next.value);
    const trimmed = next.value.trimStart();
    if (trimmed !== '') return { head, first: trimmed.charAt(0) };
  }
}

/**
 * Reads records from a JSON document (a top-level array, or `{"accounts": [...]}`) as a stream,
 * each a {@link SourceRecord} with its element index; a syntax error ends it with a {@link JsonSourceError}.
 */
export async function* readJson(input: AsyncIterable<Buffer | string>): AsyncGenerator<SourceRecord> {
  const text = new VerifiedText();
  const chunks = text.read(input);
  const { head, first } = await peekFirstCharacter(chunks);
  const wrapped = first === '{';
  let wrapperFound = false;
  const source = Readable.from(replay(head, chunks), { objectMode: false, encoding: 'utf8' });
  const tokens = parser.asStream();
  const elements = streamArray.asStream();
  // `{"accounts": [...]}` needs a filter stage; a bare array does not (a stream hop fewer).
  const picker = wrapped
    ? pick.asStream({
        filter: (stack) => {
          const match = stack.length === 1 && stack[0] === 'accounts';
          if (match) wrapperFound = true;
          return match;
        },
      })
    : undefined;
  const afterTokens = picker ?? elements;
  // Not stream.pipeline: it would destroy the last stage on a parse error and lose the elements
  // still buffered there. A parser error instead ends the chain normally, after those elements.
  let parseError: Error | undefined;
  source.on('error', (error) => elements.destroy(error));
  tokens.on('error', (error) => {
    parseError ??= error;
    afterTokens.end();
  });
  picker?.on('error', (error) => elements.destroy(error));
  if (picker !== undefined) source.pipe(tokens).pipe(picker).pipe(elements);
  else source.pipe(tokens).pipe(elements);

  let read = 0;
  try {
    for await (const item of elements as AsyncIterable<{ key: number; value: unknown }>) {
      read += 1;
      yield new SourceRecord(item.value, { element: item.key });
    }
  } catch (error) {
    throw translate(error, text, read);
  } finally {
    for (const stream of [source, tokens, elements]) stream.destroy();
    picker?.destroy();
    // Destroying the source closes the input behind it asynchronously; wait, so a reader that
    // stopped early never leaves a file open behind it.
    await finished(source).catch(() => undefined);
  }
  if (parseError !== undefined || text.failure !== undefined || text.encodingFailure !== undefined) {
    throw translate(parseError, text, read);
  }
  if (wrapped && !wrapperFound) {
    throw new JsonSourceError('the JSON object has no "accounts" array; expected [...] or {"accounts": [...]}', read);
  }
}

function translate(error: unknown, text: VerifiedText, elements: number): JsonSourceError {
  const failure = text.failure;
  if (failure !== undefined) {
    const position = { line: failure.line, column: failure.pos, offset: failure.offset };
    const reason = failure.message.replace(/^ERROR at \d+ \(\d+, \d+\): /, '').replace(/^Verifier cannot parse input: /, '');
    return new JsonSourceError(
      `JSON syntax error at ${describe(position)}: ${reason}; ${elements} element(s) were read before it, nothing after it`,
      elements,
      position,
    );
  }
  const badByte = text.encodingFailure;
  if (badByte !== undefined) {
    return new JsonSourceError(
      `the JSON document is not valid UTF-8 at ${describe(badByte)}; ${elements} element(s) were read before it, nothing after it`,
      elements,
      badByte,
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  if (/should be an array/i.test(message)) {
    return new JsonSourceError('expected a JSON array of records, or {"accounts": [...]} with an array', elements);
  }
  if (/^Parser (has expected|cannot parse)/.test(message)) {
    const position = text.endPosition();
    return new JsonSourceError(
      `the JSON document ends early at ${describe(position)}; ${elements} element(s) were read`,
      elements,
      position,
    );
  }
  return new JsonSourceError(`cannot read the JSON document: ${message}`, elements);
}
