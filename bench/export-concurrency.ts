// Speed-up of concurrency: 4 and 8 over concurrency: 1 reading a via dataset in month windows
// with 20 ms of server latency per request: from the default origin (ten years of empty history
// first, which the load skips after one request for where the data starts) and from the start
// of the data (every window holds rows), in order (the default) and with `ordered: false`.
// Prints one JSON line.
// Run: node --import tsx bench/export-concurrency.ts [scale]
import { exportRows } from '../src/exports/export-stream.ts';
import { DATA_SPAN } from '../src/sandbox/contracts.ts';
import { serveSandbox } from './export-common.ts';

const scale = Number(process.argv[2] ?? 20_000);
const DATASET = 'D23';
const s = await serveSandbox(['--scale', String(scale), '--latency', '20']);
try {
  const client = await s.login();
  const run = async (concurrency: number, origin?: string, ordered = true) => {
    const t0 = performance.now();
    const stream = exportRows(client, DATASET, { concurrency, ordered, limit: 1000, ...(origin !== undefined && { origin }) });
    let n = 0;
    for await (const _ of stream) n += 1;
    return { rows: n, ms: performance.now() - t0, pages: stream.stats.pages, windows: stream.stats.windows };
  };
  await run(4); // warm-up: builds the table
  const one = await run(1);
  const four = await run(4);
  const eight = await run(8);
  const eightUnordered = await run(8, undefined, false);
  const dataOne = await run(1, DATA_SPAN.start);
  const dataFour = await run(4, DATA_SPAN.start);
  for (const r of [four, eight, eightUnordered, dataOne, dataFour]) if (r.rows !== one.rows) throw new Error(`row counts differ: ${one.rows} vs ${r.rows}`);
  const sec = (r: { ms: number }) => +(r.ms / 1000).toFixed(2);
  const ratio = (a: { ms: number }, b: { ms: number }) => +(a.ms / b.ms).toFixed(2);
  console.log(JSON.stringify({
    bench: 'export-concurrency', dataset: DATASET, scale, latencyMs: 20, rows: one.rows, pages: one.pages, windows: one.windows,
    seconds1: sec(one), seconds4: sec(four), speedup: ratio(one, four),
    seconds8: sec(eight), speedup8: ratio(one, eight),
    seconds8Unordered: sec(eightUnordered), speedup8Unordered: ratio(one, eightUnordered),
    fromDataStart: { windows: dataOne.windows, seconds1: sec(dataOne), seconds4: sec(dataFour), speedup: ratio(dataOne, dataFour) },
    node: process.version,
  }));
  await client.close();
} finally {
  await s.close();
}
