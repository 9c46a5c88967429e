// NDJSON records with their line numbers. A line that is not JSON becomes a MalformedRecord and
// reading goes on; the `ndjson` package cannot do that (strict mode ends the stream with an error
// that has no line number, non-strict mode drops the line silently), hence this small splitter.
import { StringDecoder } from 'node:string_decoder';
import { MalformedRecord, SourceRecord } from '../source-record.ts';

export interface NdjsonOptions {
  /** Longest line kept in memory, in UTF-16 units; a longer one is reported, not held. Default 16 Mi. */
  maxLineLength?: number;
}

/** How much of a bad line a reject keeps. */
const RAW_PREVIEW = 200;

function preview(text: string): string {
  return text.length <= RAW_PREVIEW ? text : `${text.slice(0, RAW_PREVIEW)}…`;
}

function parseLine(text: string, line: number): SourceRecord | MalformedRecord | undefined {
  const trimmed = text.endsWith('\r') ? text.slice(0, -1) : text;
  if (trimmed.trim() === '') return undefined;
  try {
    return new SourceRecord(JSON.parse(trimmed), { line });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return new MalformedRecord(preview(trimmed), { line }, `line ${line} is not valid JSON: ${reason}`);
  }
}

export async function* readNdjson(
  input: AsyncIterable<Buffer | string>,
  opts: NdjsonOptions = {},
): AsyncGenerator<SourceRecord | MalformedRecord> {
  const maxLineLength = opts.maxLineLength ?? 16 * 1024 * 1024;
  const decoder = new StringDecoder('utf8');
  let partial = '';
  let line = 1;
  let skipping = false; // inside a line that was already reported as too long
  let first = true;
  for await (const chunk of input) {
    let text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    if (first && text !== '') {
      text = text.replace(/^\uFEFF/, '');
      first = false;
    }
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      if (skipping) skipping = false;
      else {
        const item = parseLine(partial + text.slice(start, newline), line);
        if (item !== undefined) yield item;
      }
      partial = '';
      start = newline + 1;
      line += 1;
    }
    if (skipping) continue;
    partial += text.slice(start);
    if (partial.length > maxLineLength) {
      yield new MalformedRecord(preview(partial), { line }, `line ${line} is longer than ${maxLineLength} characters`);
      partial = '';
      skipping = true;
    }
  }
  if (skipping) return;
  const item = parseLine(partial + decoder.end(), line);
  if (item !== undefined) yield item;
}
