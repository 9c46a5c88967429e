// Rows to NDJSON text: one JSON document per line.
import { Transform } from 'node:stream';

const BATCH_BYTES = 64 * 1024;

/**
 * An object-mode in, text out Transform writing one row per line. Lines are joined into chunks
 * of up to 64 KiB while more rows are already queued, so the sink sees a few large writes instead
 * of one per row; a chunk is never held back waiting for rows that have not arrived.
 */
export function toNdjson(): Transform {
  let pending = '';
  const transform = new Transform({
    writableObjectMode: true,
    writableHighWaterMark: 1024,
    transform(row: unknown, _encoding, callback) {
      pending += JSON.stringify(row) + '\n';
      // writableLength counts this row too: 1 means nothing else is queued behind it.
      if (pending.length >= BATCH_BYTES || transform.writableLength <= 1) {
        const chunk = pending;
        pending = '';
        callback(null, chunk);
      } else {
        callback();
      }
    },
    flush(callback) {
      callback(null, pending === '' ? undefined : pending);
    },
  });
  return transform;
}
