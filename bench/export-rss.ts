// Peak RSS of this process while exportRows -> NDJSON carries 1,000,000 rows into a slow sink.
// The sandbox runs in its own process so only the exporter's memory is measured.
// Run: node --import tsx bench/export-rss.ts [rows]
import { pipeline } from 'node:stream/promises';
import { exportRows } from '../src/exports/export-stream.ts';
import { toNdjson } from '../src/exports/ndjson.ts';
import { countingSink, serveSandbox } from './export-common.ts';

const rows = Number(process.argv[2] ?? 1_000_000);
const s = await serveSandbox(['--scale', String(rows)]);
try {
  const client = await s.login();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 25);
  const t0 = performance.now();
  const stream = exportRows(client, 'D07', { limit: 1000, prefetch: 1 });
  // Slow sink: every 16th write waits 5 ms, so the exporter is always the faster side.
  const sink = countingSink(16, 5);
  await pipeline(stream, toNdjson(), sink);
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  const ms = performance.now() - t0;
  await client.close();
  console.log(JSON.stringify({
    bench: 'export-rss', dataset: 'D07', rows: stream.stats.rows, pages: stream.stats.pages, bytes: sink.bytes,
    seconds: +(ms / 1000).toFixed(1), baselineRssMB: Math.round(baseline / 2 ** 20), peakRssMB: Math.round(peak / 2 ** 20),
    node: process.version,
  }));
} finally {
  await s.close();
}
