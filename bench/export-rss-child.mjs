// One variant of bench/export-rss.ts, in a process of its own: exportRows -> toNdjson into a slow
// sink, sampling this process's RSS every 25 ms. Plain JavaScript, so that with the compiled
// library (LENDER_BENCH_LIB=dist, the default of the bench) no TypeScript loader sits in the
// measured memory; with LENDER_BENCH_LIB=src it runs under `--import tsx`. Prints one JSON line.
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const { served, concurrency } = JSON.parse(process.env.LENDER_BENCH_RSS_CHILD ?? '{}');
const lib = process.env.LENDER_BENCH_LIB === 'src' ? '../src/index.ts' : '../dist/src/index.js';
const { LenderClient, exportRows, toNdjson } = await import(lib);

/** Every 16th write waits 5 ms, so the exporter is always the faster side. */
function slowSink() {
  let writes = 0;
  return new Writable({
    highWaterMark: 64 * 1024,
    write(_chunk, _enc, callback) {
      writes += 1;
      if (writes % 16 === 0) setTimeout(callback, 5);
      else callback();
    },
  });
}

const client = await LenderClient.login({
  authUrl: served.authUrl, lender: 'demo', email: served.email, password: served.password, ca: Buffer.from(served.ca, 'base64'),
});
const baseline = process.memoryUsage().rss;
let peak = baseline;
const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 25);
const t0 = performance.now();
const stream = exportRows(client, 'D07', { limit: 1000, prefetch: 1, concurrency, ...(concurrency > 1 && { window: 'month' }) });
await pipeline(stream, toNdjson(), slowSink());
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
await client.close();
console.log(JSON.stringify({
  rows: stream.stats.rows, pages: stream.stats.pages, seconds: +((performance.now() - t0) / 1000).toFixed(1),
  baselineRssMB: Math.round(baseline / 2 ** 20), peakRssMB: Math.round(peak / 2 ** 20),
}));
