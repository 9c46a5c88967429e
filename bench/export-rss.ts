// Peak RSS of the exporting process while exportRows -> NDJSON carries 1,000,000 rows of D07
// into a slow sink: one window read as the sink asks (concurrency 1, prefetch 1), and month
// windows read eight at a time (in order, the others reading ahead within the default budget of
// bytes). Each variant runs in a process of its own, so one's heap cannot raise the other's
// peak; the sandbox runs in its own process too, so only the exporter's memory is measured.
// Run: node --import tsx bench/export-rss.ts [rows]
import { spawnSync } from 'node:child_process';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import type { LenderClient } from '../src/client/client.ts';
import { exportRows } from '../src/exports/export-stream.ts';
import { toNdjson } from '../src/exports/ndjson.ts';
import { countingSink, serveSandbox } from './export-common.ts';

interface Measured {
  rows: number;
  pages: number;
  seconds: number;
  baselineRssMB: number;
  peakRssMB: number;
}

/** One export in this process, sampling its RSS every 25 ms. */
async function measure(login: () => Promise<LenderClient>, concurrency: number): Promise<Measured> {
  const client = await login();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 25);
  const t0 = performance.now();
  const stream = exportRows(client, 'D07', { limit: 1000, prefetch: 1, concurrency, ...(concurrency > 1 && { window: 'month' }) });
  // Slow sink: every 16th write waits 5 ms, so the exporter is always the faster side.
  await pipeline(stream, toNdjson(), countingSink(16, 5));
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage().rss);
  await client.close();
  return {
    rows: stream.stats.rows, pages: stream.stats.pages, seconds: +((performance.now() - t0) / 1000).toFixed(1),
    baselineRssMB: Math.round(baseline / 2 ** 20), peakRssMB: Math.round(peak / 2 ** 20),
  };
}

interface Served {
  authUrl: string;
  email: string;
  password: string;
  ca: string;
}

const child = process.env.LENDER_BENCH_RSS_CHILD;
if (child !== undefined) {
  // A variant: the sandbox's address and the concurrency come from the parent.
  const { served, concurrency } = JSON.parse(child) as { served: Served; concurrency: number };
  const { LenderClient } = await import('../src/client/client.ts');
  const login = () => LenderClient.login({ authUrl: served.authUrl, lender: 'demo', email: served.email, password: served.password, ca: Buffer.from(served.ca, 'base64') });
  console.log(JSON.stringify(await measure(login, concurrency)));
} else {
  const rows = Number(process.argv[2] ?? 1_000_000);
  const s = await serveSandbox(['--scale', String(rows)]);
  try {
    const served: Served = { authUrl: s.authUrl, email: s.email, password: s.password, ca: s.ca.toString('base64') };
    const run = (concurrency: number): Measured => {
      const out = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
        env: { ...process.env, LENDER_BENCH_RSS_CHILD: JSON.stringify({ served, concurrency }) }, encoding: 'utf8', maxBuffer: 1 << 20,
      });
      const line = out.stdout.trim().split('\n').at(-1) ?? '';
      if (out.status !== 0 || !line.startsWith('{')) throw new Error(`the variant with concurrency ${concurrency} failed: ${out.stderr}`);
      return JSON.parse(line) as Measured;
    };
    const one = run(1);
    const eight = run(8);
    if (eight.rows !== one.rows) throw new Error(`row counts differ: ${one.rows} vs ${eight.rows}`);
    console.log(JSON.stringify({
      bench: 'export-rss', dataset: 'D07', rows: one.rows, pages: one.pages, seconds: one.seconds,
      baselineRssMB: one.baselineRssMB, peakRssMB: one.peakRssMB,
      concurrency8: { windows: 'month', pages: eight.pages, seconds: eight.seconds, baselineRssMB: eight.baselineRssMB, peakRssMB: eight.peakRssMB },
      node: process.version,
    }));
  } finally {
    await s.close();
  }
}
