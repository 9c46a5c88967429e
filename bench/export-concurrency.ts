// Speed-up of concurrency: 4 over concurrency: 1 reading a via dataset in month windows with
// 20 ms of server latency per request, twice: from the default origin (ten years of empty history
// first, which a sequential load skips by growing its windows) and from the start of the data
// (every window holds rows). Prints one JSON line.
// Run: node --import tsx bench/export-concurrency.ts [scale]
import { exportRows } from '../src/exports/export-stream.ts';
import { DATA_SPAN } from '../src/sandbox/contracts.ts';
import { serveSandbox } from './export-common.ts';

const scale = Number(process.argv[2] ?? 20_000);
const DATASET = 'D23';
const s = await serveSandbox(['--scale', String(scale), '--latency', '20']);
try {
  const client = await s.login();
  const run = async (concurrency: number, origin?: string) => {
    const t0 = performance.now();
    const stream = exportRows(client, DATASET, { concurrency, limit: 1000, ...(origin !== undefined && { origin }) });
    let n = 0;
    for await (const _ of stream) n += 1;
    return { rows: n, ms: performance.now() - t0, pages: stream.stats.pages, windows: stream.stats.windows };
  };
  await run(4); // warm-up: builds the table
  const one = await run(1);
  const four = await run(4);
  const dataOne = await run(1, DATA_SPAN.start);
  const dataFour = await run(4, DATA_SPAN.start);
  for (const r of [four, dataOne, dataFour]) if (r.rows !== one.rows) throw new Error(`row counts differ: ${one.rows} vs ${r.rows}`);
  console.log(JSON.stringify({
    bench: 'export-concurrency', dataset: DATASET, scale, latencyMs: 20, rows: one.rows, pages: one.pages, windows: one.windows,
    seconds1: +(one.ms / 1000).toFixed(2), seconds4: +(four.ms / 1000).toFixed(2), speedup: +(one.ms / four.ms).toFixed(2),
    fromDataStart: {
      windows: dataOne.windows, seconds1: +(dataOne.ms / 1000).toFixed(2), seconds4: +(dataFour.ms / 1000).toFixed(2),
      speedup: +(dataOne.ms / dataFour.ms).toFixed(2),
    },
    node: process.version,
  }));
  await client.close();
} finally {
  await s.close();
}
