// Where rejected records are written as NDJSON: a stream the caller owns, or a file this module
// opens and closes. Lines are written as they happen, so a crash later still leaves them on disk.
//
// A rejected record is often the very thing that is wrong with the input: nested too deeply for
// JSON.stringify's recursion, a cycle, a BigInt. Its line must still be written (the rejects file
// accounts for every reject), so such a record is replaced by `recordPreview`, a short JSON-like
// text of its start, and the line says so by having no `record` field.
import { once } from 'node:events';
import type { WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { ConfigError } from '../core/errors.ts';
import { FileError } from '../core/file-errors.ts';
import { privateWriteStream } from '../core/private-files.ts';
import { isNestedDeeperThan, MAX_RECORD_DEPTH } from './nesting.ts';
import { previewValue } from './preview.ts';

/** One rejects line: the reject with its record, or with a preview when the record cannot be
 * written as JSON. Never throws. */
export function rejectLine<E extends { readonly record?: unknown }>(entry: E): string {
  // Within the limit JSON.stringify's recursion is shallow; beyond it, do not even try (a
  // stack overflow is the failure this avoids, and it is slow to reach).
  try {
    if (!isNestedDeeperThan(entry.record, MAX_RECORD_DEPTH)) return JSON.stringify(entry);
  } catch {
    // A cycle cannot get here (it is too deep), but a BigInt, a getter or a toJSON that throws
    // can: the preview stands in for the record.
  }
  const { record, ...rest } = entry;
  return JSON.stringify({ ...rest, recordPreview: previewValue(record) });
}

export class RejectsSink {
  readonly #stream: Writable | NodeJS.WritableStream;
  readonly #owned: boolean;
  /** The file this sink opened. */
  readonly #path: string | undefined;
  #closing: Promise<void> | undefined;
  readonly #namedErrors = new WeakMap<Error, FileError>();

  constructor(target: Writable | NodeJS.WritableStream | string) {
    // From JavaScript anything may come: refused here, as a ConfigError, rather than failing later.
    const writable = target as Partial<Writable> | null;
    const isStream = typeof writable?.write === 'function' && typeof writable.on === 'function';
    if (typeof target === 'string' ? target.trim() === '' : !isStream) {
      throw new ConfigError(`rejects must be a file name or a writable stream, not ${typeof target === 'string' ? `'${target}'` : String(target)}`);
    }
    this.#owned = typeof target === 'string';
    this.#path = typeof target === 'string' ? target : undefined;
    // Rejected records are personal data in clear (names, national ids, phones): owner-only.
    this.#stream = typeof target === 'string' ? privateWriteStream(target, 'w') : target;
  }

  /** Resolves once a file this sink opened is open (at once for a caller's stream); rejects with
   * the FileError of one that cannot be (a folder, a place the user may not write). */
  opened(): Promise<void> {
    const stream = this.#stream as Partial<WriteStream>;
    if (!this.#owned || stream.pending === false) return Promise.resolve();
    return once(stream as WriteStream, 'open').then(() => undefined, (error: Error) => {
      throw this.#named(error);
    });
  }

  /** false when the stream wants the writer to wait for 'drain'. */
  write(entry: object): boolean {
    return this.#stream.write(`${rejectLine(entry)}\n`);
  }

  onceDrained(listener: () => void): void {
    this.#stream.once('drain', listener);
  }

  /** A file's failure names it (a full disk, a folder that is not there). */
  onError(listener: (error: Error) => void): void {
    this.#stream.on('error', (error: Error) => listener(this.#named(error)));
  }

  /** A file's error as a FileError naming it: the same object each time it is asked for, so the
   * writer, told of it twice (opening, and the stream's 'error'), fails with one error. */
  #named(error: Error): Error {
    if (this.#path === undefined || error instanceof FileError) return error;
    let named = this.#namedErrors.get(error);
    if (named === undefined) {
      named = new FileError('write the rejects file', this.#path, error);
      this.#namedErrors.set(error, named);
    }
    return named;
  }

  /** Ends a file this sink opened (and waits until it is on disk); a caller's stream stays open.
   * Called again, it waits for the same end. */
  close(): Promise<void> {
    if (!this.#owned) return Promise.resolve();
    if (this.#closing === undefined) {
      const stream = this.#stream as Writable;
      stream.end();
      this.#closing = finished(stream);
    }
    return this.#closing;
  }

  /** Discards a file this sink opened, with any line not yet written: for a file that failed. */
  destroy(): void {
    if (this.#owned) (this.#stream as Writable).destroy();
  }
}
