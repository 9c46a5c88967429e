// Speed-up of concurrency: 4 over concurrency: 1 reading a via dataset in month windows with
// 20 ms of server latency per request. Prints one JSON line.
// Run: node --import tsx bench/export-concurrency.ts [scale]
import { exportRows } from '../src/exports/export-stream.ts';
import { serveSandbox } from './export-common.ts';

const scale = Number(process.argv[2] ?? 20_000);
const DATASET = 'D23';
const s = await serveSandbox(['--scale', String(scale), '--latency', '20']);
try {
  const client = await s.login();
  const run = async (concurrency: number) => {
    const t0 = performance.now();
    const stream = exportRows(client, DATASET, { concurrency, limit: 1000 });
    let n = 0;
    for await (const _ of stream) n += 1;
    return { rows: n, ms: performance.now() - t0, pages: stream.stats.pages, windows: stream.stats.windows };
  };
  await run(4); // warm-up: builds the table
  const one = await run(1);
  const four = await run(4);
  if (one.rows !== four.rows) throw new Error(`row counts differ: ${one.rows} vs ${four.rows}`);
  console.log(JSON.stringify({
    bench: 'export-concurrency', dataset: DATASET, scale, latencyMs: 20, rows: one.rows, pages: one.pages, windows: one.windows,
    seconds1: +(one.ms / 1000).toFixed(2), seconds4: +(four.ms / 1000).toFixed(2), speedup: +(one.ms / four.ms).toFixed(2), node: process.version,
  }));
  await client.close();
} finally {
  await s.close();
}
