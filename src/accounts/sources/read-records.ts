// Records from a byte stream in either source format, told apart from the first bytes when the
// caller does not say (detect-format.ts). The bytes read to decide are replayed, not lost.
import { detectFormat, type SourceFormat } from './detect-format.ts';
import { readJson } from './json.ts';
import { readNdjson, type NdjsonOptions } from './ndjson.ts';
import type { MalformedRecord, SourceRecord } from '../source-record.ts';
import { replay } from './replay.ts';

/** Options of {@link readRecords}: the source format, `auto` by default. */
export interface ReadRecordsOptions extends NdjsonOptions {
  /** Default 'auto'. */
  format?: SourceFormat | 'auto';
}

/** Enough to see `{"accounts": [` past any indentation; beyond it the input is NDJSON. */
const MAX_SNIFF = 4096;

async function sniff(input: AsyncIterable<Buffer | string>): Promise<{ format: SourceFormat; chunks: AsyncIterable<Buffer | string> }> {
  const iterator = input[Symbol.asyncIterator]();
  const head: (Buffer | string)[] = [];
  let text = '';
  let format: SourceFormat | undefined;
  while (format === undefined) {
    const next = await iterator.next();
    if (next.done === true) {
      format = detectFormat(text, true) ?? 'ndjson';
      break;
    }
    head.push(next.value);
    // A multi-byte character split here only blurs the tail of the sniffed text, never its start.
    text += typeof next.value === 'string' ? next.value : next.value.toString('utf8');
    format = detectFormat(text, text.length >= MAX_SNIFF);
  }
  return { format, chunks: replay(head, iterator) };
}

/**
 * Reads records from NDJSON or JSON input, telling the format from its first bytes unless given;
 * what `lender push` and `lender flag` read their files with.
 */
export async function* readRecords(
  input: AsyncIterable<Buffer | string>,
  opts: ReadRecordsOptions = {},
): AsyncGenerator<SourceRecord | MalformedRecord> {
  let format = opts.format ?? 'auto';
  let chunks = input;
  if (format === 'auto') ({ format, chunks } = await sniff(input));
  if (format === 'json') yield* readJson(chunks);
  else yield* readNdjson(chunks, opts);
}
