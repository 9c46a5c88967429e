// Rows to NDJSON text: one JSON document per line.
import { Transform } from 'node:stream';

/** An object-mode in, text out Transform writing one row per line. */
export function toNdjson(): Transform {
  return new Transform({
    writableObjectMode: true,
    transform(row: unknown, _encoding, callback) {
      callback(null, JSON.stringify(row) + '\n');
    },
  });
}
