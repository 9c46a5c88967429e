// Peak RSS of the exporting process while exportRows -> NDJSON carries 1,000,000 rows of D07
// into a slow sink: one window read as the sink asks (concurrency 1, prefetch 1), and month
// windows read eight at a time (in order, the others reading ahead within the default budget of
// bytes). Each variant runs in a process of its own (bench/export-rss-child.mjs), so one's heap
// cannot raise the other's peak; the sandbox runs in its own process too, so only the exporter's
// memory is measured. By default the variants run the compiled library, built first into dist/
// (`npm run build`), as an installed package does; `--from sources` runs src/ through tsx, whose
// loader adds some 30 MB to both figures. A third variant runs the CLI, `lender export` with eight
// month windows, into a slow pipe reader: the command sets its own young generation where Node
// lets it (docs/cli.md#memory), which a program using the library leaves to Node.
// Run: node --import tsx bench/export-rss.ts [rows] [--from built|sources]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readUsage, serveSandbox, USAGE_PRELOAD } from './export-common.ts';

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
const BIN = fileURLToPath(new URL('../bin/lender.mjs', import.meta.url));
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
  /** `lender export D07 --window month --concurrency 8` into a reader that waits 5 ms every 16th chunk. */
  const runCli = async (): Promise<{ rows: number; seconds: number; peakRssMB: number }> => {
    const dir = await mkdtemp(join(tmpdir(), 'lender-rss-'));
    try {
      const usageFile = join(dir, 'usage.json');
      const env = { ...process.env, ...s.cliEnv(), LENDER_BENCH_USAGE_FILE: usageFile };
      const t0 = performance.now();
      const child = spawn(process.execPath, ['--import', USAGE_PRELOAD, BIN, 'export', 'D07', '--limit', '1000', '--window', 'month', '--concurrency', '8'], {
        env, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let rows = 0;
      let chunks = 0;
      let stderr = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        for (const byte of chunk) if (byte === 0x0a) rows += 1;
        chunks += 1;
        if (chunks % 16 === 0) {
          child.stdout!.pause();
          setTimeout(() => child.stdout!.resume(), 5);
        }
      });
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      if (code !== 0) throw new Error(`lender export exited with ${code}: ${stderr.trim()}`);
      const { maxRssKB } = await readUsage(usageFile);
      return { rows, seconds: +((performance.now() - t0) / 1000).toFixed(1), peakRssMB: Math.round(maxRssKB / 1024) };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  const one = run(1);
  const eight = run(8);
  const cli = await runCli();
  if (eight.rows !== one.rows || cli.rows !== one.rows) throw new Error(`row counts differ: ${one.rows} vs ${eight.rows} vs ${cli.rows}`);
  console.log(JSON.stringify({
    bench: 'export-rss', dataset: 'D07', rows: one.rows, from: values.from, pages: one.pages, seconds: one.seconds,
    baselineRssMB: one.baselineRssMB, peakRssMB: one.peakRssMB,
    concurrency8: { windows: 'month', pages: eight.pages, seconds: eight.seconds, baselineRssMB: eight.baselineRssMB, peakRssMB: eight.peakRssMB },
    cliConcurrency8: { seconds: cli.seconds, peakRssMB: cli.peakRssMB },
    node: process.version,
  }));
} finally {
  await s.close();
}
