// Peak RSS of the exporting process while exportRows -> NDJSON carries 1,000,000 rows of D07
// into a slow sink: one window read as the sink asks (concurrency 1, prefetch 1), and month
// windows read eight at a time (in order, the others reading ahead within the default budget of
// bytes). Each variant runs in a process of its own (bench/export-rss-child.mjs), so one's heap
// cannot raise the other's peak; the sandbox runs in its own process too, so only the exporter's
// memory is measured. By default the variants run the compiled library, built first into dist/
// (`npm run build`), as an installed package does; `--from sources` runs src/ through tsx, whose
// loader adds some 30 MB to both figures.
// Run: node --import tsx bench/export-rss.ts [rows] [--from built|sources]
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { serveSandbox } from './export-common.ts';

interface Measured {
  rows: number;
  pages: number;
  seconds: number;
  baselineRssMB: number;
  peakRssMB: number;
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { from: { type: 'string', default: 'built' } } });
if (values.from !== 'built' && values.from !== 'sources') throw new Error('--from is built or sources');
const fromSources = values.from === 'sources';
const rows = Number(positionals[0] ?? 1_000_000);
const CHILD = fileURLToPath(new URL('./export-rss-child.mjs', import.meta.url));
if (!fromSources) execFileSync('npm', ['run', '--silent', 'build'], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });

const s = await serveSandbox(['--scale', String(rows)]);
try {
  const served = { authUrl: s.authUrl, email: s.email, password: s.password, ca: s.ca.toString('base64') };
  const run = (concurrency: number): Measured => {
    const out = spawnSync(process.execPath, [...(fromSources ? ['--import', 'tsx'] : []), CHILD], {
      env: { ...process.env, LENDER_BENCH_LIB: fromSources ? 'src' : 'dist', LENDER_BENCH_RSS_CHILD: JSON.stringify({ served, concurrency }) },
      encoding: 'utf8', maxBuffer: 1 << 20,
    });
    const line = out.stdout.trim().split('\n').at(-1) ?? '';
    if (out.status !== 0 || !line.startsWith('{')) throw new Error(`the variant with concurrency ${concurrency} failed: ${out.stderr}`);
    return JSON.parse(line) as Measured;
  };
  const one = run(1);
  const eight = run(8);
  if (eight.rows !== one.rows) throw new Error(`row counts differ: ${one.rows} vs ${eight.rows}`);
  console.log(JSON.stringify({
    bench: 'export-rss', dataset: 'D07', rows: one.rows, from: values.from, pages: one.pages, seconds: one.seconds,
    baselineRssMB: one.baselineRssMB, peakRssMB: one.peakRssMB,
    concurrency8: { windows: 'month', pages: eight.pages, seconds: eight.seconds, baselineRssMB: eight.baselineRssMB, peakRssMB: eight.peakRssMB },
    node: process.version,
  }));
} finally {
  await s.close();
}
