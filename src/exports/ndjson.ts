// Rows to NDJSON text: one JSON document per line.
import { Transform } from 'node:stream';

const BATCH_BYTES = 64 * 1024;

/** Rows as NDJSON text, one line each: a page's rows for a single write. */
export function ndjsonText(rows: readonly unknown[]): string {
  let text = '';
  for (const row of rows) text += JSON.stringify(row) + '\n';
  return text;
}

/**
 * An object-mode in, text out Transform writing one row per line. Lines are joined into chunks
 * of up to 64 KiB, so the sink sees a few large writes instead of one per row; a chunk is never
 * held back waiting for rows that have not arrived.
 *
 * An export stream hands over a page's rows in one synchronous burst, each written through as it
 * is pushed, so "is another row queued?" is always "no" at the time of a write. Instead a partial
 * chunk is sent at the end of the current burst (a microtask), which joins a page's rows into a
 * few writes whatever the producer; per-row chunks cost a second stream hop and a Buffer per row.
 */
export function toNdjson(): Transform {
  let pending = '';
  let scheduled = false;
  const sendPending = (): void => {
    scheduled = false;
    // Emptied meanwhile by a full chunk or by flush() at the end; nothing to send after either.
    if (pending === '' || transform.destroyed) return;
    const chunk = pending;
    pending = '';
    // Bounded without honouring push()'s return: at most one partial chunk per burst goes out
    // this way, and a full chunk goes through the transform callback, which waits for the reader.
    transform.push(chunk);
  };
  const transform = new Transform({
    writableObjectMode: true,
    writableHighWaterMark: 1024,
    transform(row: unknown, _encoding, callback) {
      pending += JSON.stringify(row) + '\n';
      if (pending.length >= BATCH_BYTES) {
        const chunk = pending;
        pending = '';
        callback(null, chunk);
        return;
      }
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(sendPending);
      }
      callback();
    },
    flush(callback) {
      const chunk = pending;
      pending = '';
      callback(null, chunk === '' ? undefined : chunk);
    },
  });
  return transform;
}
