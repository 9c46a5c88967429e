// Where rejected records are written as NDJSON: a stream the caller owns, or a file this module
// opens and closes. Lines are written as they happen, so a crash later still leaves them on disk.
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';

export class RejectsSink {
  readonly #stream: Writable | NodeJS.WritableStream;
  readonly #owned: boolean;

  constructor(target: Writable | NodeJS.WritableStream | string) {
    this.#owned = typeof target === 'string';
    this.#stream = typeof target === 'string' ? createWriteStream(target, { flags: 'w' }) : target;
  }

  /** false when the stream wants the writer to wait for 'drain'. */
  write(entry: object): boolean {
    return this.#stream.write(`${JSON.stringify(entry)}\n`);
  }

  onceDrained(listener: () => void): void {
    this.#stream.once('drain', listener);
  }

  onError(listener: (error: Error) => void): void {
    this.#stream.on('error', listener);
  }

  /** Ends a file this sink opened (and waits until it is on disk); a caller's stream stays open. */
  async close(): Promise<void> {
    if (!this.#owned) return;
    const stream = this.#stream as Writable;
    stream.end();
    await finished(stream);
  }

  destroy(): void {
    if (this.#owned) (this.#stream as Writable).destroy();
  }
}
