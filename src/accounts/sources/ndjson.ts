// NDJSON records with their line numbers. A line that is not JSON becomes a MalformedRecord and
// reading goes on; the `ndjson` package cannot do that (strict mode ends the stream with an error
// that has no line number, non-strict mode drops the line silently), hence this small splitter.
//
// Lines are split on bytes and each is decoded on its own, strictly: a byte sequence that is not
// UTF-8 makes its line a MalformedRecord ("line N is not valid UTF-8") instead of turning into
// U+FFFD, because a record silently changed is a kind of loss. Splitting bytes on 0x0A is safe:
// that byte never occurs inside a multi-byte UTF-8 sequence. Only the current line is held.
import { MalformedRecord, SourceRecord } from '../source-record.ts';

/** Options of {@link readNdjson} and {@link readRecords}. */
export interface NdjsonOptions {
  /** Longest line kept in memory, in bytes; a longer one is reported, not held. Default 16 MiB. */
  maxLineLength?: number;
}

/** How much of a bad line a reject keeps, in characters. */
const RAW_PREVIEW = 200;
const NEWLINE = 0x0a;

// ignoreBOM keeps a U+FEFF in the text: otherwise each decode() call (one per line) would drop
// one at the start of any line. Only the stream's first line has its BOM removed, explicitly.
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
// For previews of bad lines only: what a person reading the rejects file can recognise.
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

function preview(text: string): string {
  return text.length <= RAW_PREVIEW ? text : `${text.slice(0, RAW_PREVIEW)}…`;
}

/** Enough bytes for RAW_PREVIEW characters of any script. */
const PREVIEW_BYTES = RAW_PREVIEW * 4;

function previewBytes(bytes: Uint8Array): string {
  return preview(lenient.decode(bytes.subarray(0, PREVIEW_BYTES)));
}

/** The start of a line held in pieces, without joining all of it (it may be many megabytes). */
function previewParts(parts: Uint8Array[]): string {
  const head: Uint8Array[] = [];
  let bytes = 0;
  for (const part of parts) {
    if (bytes >= PREVIEW_BYTES) break;
    head.push(part);
    bytes += part.length;
  }
  return previewBytes(join(head, bytes));
}

function looksLikeUtf16(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
}

/** Only spaces, tabs and CRs (or nothing): skipped without decoding, as files padded with
 * blank lines would otherwise pay a decoder call per line. */
function isBlank(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

function parseLine(bytes: Uint8Array, line: number): SourceRecord | MalformedRecord | undefined {
  if (isBlank(bytes)) return undefined;
  let text: string;
  try {
    text = strict.decode(bytes);
  } catch {
    const hint = line === 1 && looksLikeUtf16(bytes) ? ' (it starts with a UTF-16 byte order mark; convert the file to UTF-8)' : '';
    return new MalformedRecord(previewBytes(bytes), { line }, `line ${line} is not valid UTF-8${hint}`);
  }
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const trimmed = text.endsWith('\r') ? text.slice(0, -1) : text;
  if (trimmed.trim() === '') return undefined;
  try {
    return new SourceRecord(JSON.parse(trimmed), { line });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return new MalformedRecord(preview(trimmed), { line }, `line ${line} is not valid JSON: ${reason}`);
  }
}

/** The pieces of one line, joined only when a line spans chunks (most lines do not). */
function join(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  return Buffer.concat(parts, total);
}

/**
 * Reads records from NDJSON bytes or text, each a {@link SourceRecord} with its line number; a line
 * that is not a record becomes a {@link MalformedRecord} (a reject, not an error) and reading goes on.
 */
export async function* readNdjson(
  input: AsyncIterable<Buffer | string>,
  opts: NdjsonOptions = {},
): AsyncGenerator<SourceRecord | MalformedRecord> {
  const maxLineLength = opts.maxLineLength ?? 16 * 1024 * 1024;
  let partial: Uint8Array[] = [];
  let partialBytes = 0;
  let line = 1;
  let skipping = false; // inside a line that was already reported as too long
  for await (const chunk of input) {
    // Text chunks (a stream with an encoding set) were decoded by someone else already; as bytes
    // they take the same path.
    const bytes: Uint8Array = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    for (let newline = bytes.indexOf(NEWLINE); newline !== -1; newline = bytes.indexOf(NEWLINE, start)) {
      if (skipping) skipping = false;
      else {
        const piece = bytes.subarray(start, newline);
        const item = parseLine(partialBytes === 0 ? piece : join([...partial, piece], partialBytes + piece.length), line);
        if (item !== undefined) yield item;
      }
      partial = [];
      partialBytes = 0;
      start = newline + 1;
      line += 1;
    }
    if (skipping || start === bytes.length) continue;
    const rest = bytes.subarray(start);
    partial.push(rest);
    partialBytes += rest.length;
    if (partialBytes > maxLineLength) {
      yield new MalformedRecord(previewParts(partial), { line }, `line ${line} is longer than ${maxLineLength} bytes`);
      partial = [];
      partialBytes = 0;
      skipping = true;
    }
  }
  if (skipping || partialBytes === 0) return;
  const item = parseLine(join(partial, partialBytes), line);
  if (item !== undefined) yield item;
}
