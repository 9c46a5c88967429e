// `npm run bench`: runs every benchmark in bench/ one after another, each in its own process (so
// one bench's heap, sandbox or sockets cannot skew the next), and prints one table of the figures
// each is judged by (docs/benchmarks.md). Each bench prints one JSON line; a bench that fails,
// times out or prints no JSON is shown as FAILED in the table, the others still run, and the exit
// code is 1 at the end.
//
//   npm run bench                         full sizes (the figures of docs/benchmarks.md; takes a while)
//   npm run bench -- --quick              small sizes, for a smoke run (figures not comparable)
//   npm run bench -- --only export-rss,account-writer
//   npm run bench -- --json               also print every raw result line to stdout
//   npm run bench -- --with sinks         also run the opt-in benches named (see OPT_IN)
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Target {
  op: '>=' | '<=' | '>' | '<';
  value: number;
}

const MEETS: Record<Target['op'], (raw: number, value: number) => boolean> = {
  '>=': (raw, value) => raw >= value,
  '<=': (raw, value) => raw <= value,
  '>': (raw, value) => raw > value,
  '<': (raw, value) => raw < value,
};

// Benches run only when asked for (--with or --only): `sinks` takes a few minutes at full size
// (nine syncs of 1,000,000 rows) and needs a PostgreSQL server (it starts a throwaway cluster).
const OPT_IN = new Set(['sinks']);

interface Figure {
  /** Dotted path into the bench's JSON line, e.g. "latency20.ratioPrefetch4". */
  path: string;
  label: string;
  unit?: string;
  target?: Target;
}

interface Known {
  figures: Figure[];
  /** Arguments for --quick; the bench's own defaults are the full run. */
  quick: string[];
}

// The figures each bench is judged by, with its target where it has one. Benches not listed
// here still run; their numeric fields are shown as they come.
const KNOWN: Record<string, Known> = {
  'sandbox-processing': {
    quick: ['--records', '20000'],
    figures: [{ path: 'recordsPerSecond', label: 'sub-account records applied per second', unit: '/s' }],
  },
  'sandbox-pages': {
    quick: ['--scale', '100000', '--samples', '10', '--walk-pages', '50'],
    figures: [
      { path: 'deepToFirstRatio', label: 'deep page / first page latency (keyset, not offset)', unit: '×', target: { op: '<=', value: 2 } },
      { path: 'firstPageMedianMs', label: 'first page median', unit: 'ms' },
      { path: 'deepPageMedianMs', label: 'deep page median', unit: 'ms' },
      { path: 'rowsPerSecond', label: 'rows served per second (1000-row pages)', unit: '/s' },
      { path: 'startMs', label: 'sandbox start', unit: 'ms' },
      { path: 'rssMb.afterD07Built', label: 'sandbox RSS with D07 built', unit: 'MB' },
    ],
  },
  'export-throughput': {
    quick: ['20000'],
    figures: [
      { path: 'latency0.ratio', label: 'exportRows→NDJSON / plain undici loop, no latency', unit: '×', target: { op: '>=', value: 0.9 } },
      { path: 'latency0.streamRowsPerSec', label: 'exportRows→NDJSON rows per second, no latency', unit: '/s' },
      { path: 'latency20.ratio', label: 'same, 20 ms server latency, prefetch 1', unit: '×' },
      { path: 'latency20.ratioPrefetch4', label: 'same, 20 ms server latency, prefetch 4', unit: '×' },
      { path: 'latency20Consumer.ratio', label: 'same, 20 ms latency and a consumer working ~10 ms per page, prefetch 1', unit: '×', target: { op: '>', value: 1 } },
    ],
  },
  'export-rss': {
    quick: ['100000'],
    figures: [
      { path: 'peakRssMB', label: 'peak RSS exporting into a slow sink', unit: 'MB', target: { op: '<=', value: 200 } },
      { path: 'concurrency8.peakRssMB', label: 'same, month windows read eight at a time', unit: 'MB', target: { op: '<', value: 150 } },
      { path: 'cliConcurrency8.peakRssMB', label: 'same through `lender export --window month --concurrency 8` into a slow pipe reader', unit: 'MB', target: { op: '<', value: 150 } },
      { path: 'rows', label: 'rows exported' },
    ],
  },
  'export-concurrency': {
    quick: ['5000'],
    figures: [
      { path: 'speedup', label: 'concurrency 4 / 1, D23 at scale 20,000 from the default origin (empty years first), 20 ms latency', unit: '×', target: { op: '>=', value: 3 } },
      { path: 'fromDataStart.speedup', label: 'concurrency 4 / 1, same from the start of its data', unit: '×', target: { op: '>=', value: 3.5 } },
      { path: 'speedup8', label: 'concurrency 8 / 1, from the default origin', unit: '×', target: { op: '>=', value: 5 } },
      { path: 'speedup8Unordered', label: 'concurrency 8 with ordered: false / 1, from the default origin', unit: '×' },
    ],
  },
  'cli-start': {
    quick: ['--rows', '50000', '--rounds', '1'],
    figures: [
      { path: 'versionToNode', label: '`lender --version` in a fresh clone / `node -e 0`', unit: '×', target: { op: '<=', value: 1.5 } },
      { path: 'binToLoop', label: '`npx lender export D07 --limit 1000` in a fresh clone / plain undici page loop, wall', unit: '×', target: { op: '<=', value: 1.08 } },
      { path: 'distToLoop', label: 'the same export through dist/src/cli/main.js / the loop', unit: '×', target: { op: '<=', value: 1.05 } },
    ],
  },
  'repl-startup': {
    quick: ['--runs', '2'],
    figures: [
      { path: 'promptMedianMs', label: '`lender repl --sandbox`: spawn to first prompt', unit: 'ms', target: { op: '<=', value: 300 } },
      { path: 'connectedMedianMs', label: 'spawn to session connected (sandbox up, logged in)', unit: 'ms', target: { op: '<=', value: 1000 } },
    ],
  },
  ndjson: {
    quick: ['20000', '3'],
    figures: [
      { path: 'parse.speedOfOurs', label: 'readNdjson / the ndjson package, parsing account records (ours keeps line numbers and survives bad lines)', unit: '×' },
      { path: 'parse.oursPerSec', label: 'readNdjson records parsed per second', unit: '/s' },
      { path: 'stringify.speedOfOurs', label: 'toNdjson / the ndjson package, writing rows', unit: '×' },
    ],
  },
  'account-writer': {
    quick: ['--records', '5000', '--rounds', '1'],
    figures: [
      { path: 'ratio', label: 'account writer / plain undici POST loop', unit: '×', target: { op: '>=', value: 0.85 } },
      { path: 'writerRecordsPerSec', label: 'account writer records per second', unit: '/s' },
      { path: 'validationMicrosPerRecord', label: 'validation cost per record', unit: 'µs' },
    ],
  },
  sinks: {
    quick: ['--rows', '50000', '--rounds', '1'],
    figures: [
      { path: 'duckdb.ratioToNdjson', label: '`lender sync` D07 into DuckDB / into NDJSON, wall time (median of rounds)', unit: '×', target: { op: '<=', value: 1.3 } },
      { path: 'postgres.ratioToNdjson', label: 'same, into PostgreSQL / into NDJSON', unit: '×', target: { op: '<=', value: 1.3 } },
      { path: 'ndjson.rowsPerSec', label: 'rows per second into NDJSON', unit: '/s' },
      { path: 'duckdb.rowsPerSec', label: 'rows per second into DuckDB', unit: '/s' },
      { path: 'postgres.rowsPerSec', label: 'rows per second into PostgreSQL', unit: '/s' },
      { path: 'ndjson.maxPeakRssMB', label: 'peak RSS of the sync process, NDJSON', unit: 'MB', target: { op: '<', value: 200 } },
      { path: 'duckdb.maxPeakRssMB', label: 'peak RSS of the sync process, DuckDB', unit: 'MB', target: { op: '<', value: 200 } },
      { path: 'postgres.maxPeakRssMB', label: 'peak RSS of the sync process, PostgreSQL', unit: 'MB', target: { op: '<', value: 200 } },
    ],
  },
};

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    with: { type: 'string' },
    json: { type: 'boolean', default: false },
    'timeout-min': { type: 'string' },
  },
  strict: true,
});
const quick = values.quick === true;
const timeoutMs = Number(values['timeout-min'] ?? (quick ? 5 : 20)) * 60_000;

/** Bench scripts: every .ts here that prints a result, not the helpers they share. */
function discover(): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.ts') && !f.startsWith('.') && f !== basename(fileURLToPath(import.meta.url)))
    // Every bench names itself in its JSON line (`bench: 'name'`); shared helpers do not.
    .filter((f) => /\bbench:\s*['"`]/.test(readFileSync(join(BENCH_DIR, f), 'utf8')))
    .map((f) => f.slice(0, -3))
    .sort();
}

interface Outcome {
  name: string;
  command: string;
  ok: boolean;
  seconds: number;
  result?: Record<string, unknown>;
  error?: string;
}

function runBench(name: string): Promise<Outcome> {
  const args = quick ? (KNOWN[name]?.quick ?? []) : [];
  const command = `node --import tsx bench/${name}.ts${args.length > 0 ? ` ${args.join(' ')}` : ''}`;
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(BENCH_DIR, `${name}.ts`), ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Benches not in KNOWN can read this to shrink themselves.
      env: { ...process.env, ...(quick && { LENDER_BENCH_QUICK: '1' }) },
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
      const seconds = (performance.now() - started) / 1000;
      const line = stdout.trim().split('\n').reverse().find((l) => l.trim().startsWith('{'));
      let result: Record<string, unknown> | undefined;
      if (line !== undefined) {
        try {
          result = JSON.parse(line) as Record<string, unknown>;
        } catch {
          result = undefined;
        }
      }
      // Node ends an uncaught error with its own version line; the message is the line before.
      const errLines = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !/^Node\.js v\d/.test(l) && !l.startsWith('at '));
      const lastError = errLines.reverse().find((l) => /error/i.test(l)) ?? errLines[0];
      let error: string | undefined;
      if (spawnError) error = spawnError.message;
      else if (signal !== null) error = seconds * 1000 >= timeoutMs ? `timed out after ${Math.round(timeoutMs / 60_000)} min` : `killed by ${signal}`;
      else if (code !== 0) error = `exit ${code}${lastError ? `: ${lastError}` : ''}`;
      else if (result === undefined) error = 'printed no JSON result line';
      resolve({ name, command, ok: error === undefined, seconds, ...(result && { result }), ...(error && { error }) });
    };
    child.once('error', (e) => finish(null, null, e));
    child.once('close', (code, signal) => finish(code, signal));
  });
}

function at(obj: unknown, path: string): unknown {
  let value = obj;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Numeric leaves of a result, for benches without a KNOWN entry. */
function numericLeaves(obj: Record<string, unknown>, prefix = ''): Figure[] {
  const out: Figure[] = [];
  for (const [key, value] of Object.entries(obj)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'number') out.push({ path, label: path });
    else if (typeof value === 'object' && value !== null && !Array.isArray(value)) out.push(...numericLeaves(value as Record<string, unknown>, path));
  }
  // A bench that states its own target next to a ratio (`{ ratio, target }`) gets it checked.
  const target = obj.target;
  return out
    .filter((f) => f.path !== 'target')
    .map((f) => (f.path === 'ratio' && typeof target === 'number' ? { ...f, unit: '×', target: { op: '>=', value: target } } : f));
}

function format(value: number): string {
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return Math.abs(value) >= 100 ? Math.round(value).toLocaleString('en-US') : String(Number(value.toFixed(2)));
}

interface TableRow {
  bench: string;
  figure: string;
  value: string;
  target: string;
  verdict: string;
}

function rowsOf(outcome: Outcome): TableRow[] {
  if (!outcome.ok || outcome.result === undefined) {
    return [{ bench: outcome.name, figure: 'FAILED', value: '', target: '', verdict: outcome.error ?? 'failed' }];
  }
  const figures = KNOWN[outcome.name]?.figures ?? numericLeaves(outcome.result);
  return figures.map((f, i) => {
    const raw = at(outcome.result, f.path);
    if (typeof raw !== 'number') {
      return { bench: i === 0 ? outcome.name : '', figure: f.label, value: 'missing', target: '', verdict: `no "${f.path}" in its output` };
    }
    const met = f.target === undefined ? undefined : MEETS[f.target.op](raw, f.target.value);
    return {
      bench: i === 0 ? outcome.name : '',
      figure: f.label,
      value: `${format(raw)}${f.unit ? ` ${f.unit}` : ''}`,
      target: f.target ? `${f.target.op} ${f.target.value}` : '',
      verdict: met === undefined ? '' : met ? 'ok' : 'missed',
    };
  });
}

function table(rows: TableRow[]): string {
  const head: TableRow = { bench: 'bench', figure: 'figure', value: 'value', target: 'target', verdict: '' };
  const all = [head, ...rows];
  const w = (k: keyof TableRow) => Math.max(...all.map((r) => r[k].length));
  const widths = { bench: w('bench'), figure: w('figure'), value: w('value'), target: w('target') };
  const line = (r: TableRow) =>
    `${r.bench.padEnd(widths.bench)}  ${r.figure.padEnd(widths.figure)}  ${r.value.padStart(widths.value)}  ${r.target.padEnd(widths.target)}  ${r.verdict}`.trimEnd();
  return [line(head), '-'.repeat(line(head).length + 8), ...rows.map(line)].join('\n');
}

const names = discover();
const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
const extra = values.with?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
const unknown = [...(only ?? []), ...extra].filter((n) => !names.includes(n));
if (unknown.length > 0) {
  process.stderr.write(`run-all: no bench named ${unknown.join(', ')}; there are ${names.join(', ')}\n`);
  process.exit(2);
}
const selected = only ?? names.filter((n) => !OPT_IN.has(n) || extra.includes(n));
const skipped = names.filter((n) => OPT_IN.has(n) && !selected.includes(n));
process.stderr.write(`Running ${selected.length} benchmarks${quick ? ' (quick sizes)' : ''}, one at a time, on node ${process.version}` +
  `${skipped.length > 0 ? ` (opt-in, not run: ${skipped.join(', ')}; add them with --with ${skipped.join(',')})` : ''}\n`);

const outcomes: Outcome[] = [];
for (const name of selected) {
  process.stderr.write(`  ${name} ... `);
  const outcome = await runBench(name);
  process.stderr.write(`${outcome.ok ? 'done' : 'FAILED'} in ${outcome.seconds.toFixed(1)} s${outcome.ok ? '' : ` (${outcome.error})`}\n`);
  outcomes.push(outcome);
  if (values.json && outcome.result) process.stdout.write(JSON.stringify(outcome.result) + '\n');
}

process.stdout.write(`\n${table(outcomes.flatMap(rowsOf))}\n\n`);
process.stdout.write(`Commands (each bench prints one JSON line):\n${outcomes.map((o) => `  ${o.command}`).join('\n')}\n`);
if (quick) process.stdout.write('Quick sizes: figures are smoke-test values, not those of docs/benchmarks.md.\n');
const failed = outcomes.filter((o) => !o.ok);
if (failed.length > 0) {
  process.stdout.write(`\n${failed.length} of ${outcomes.length} benchmarks failed: ${failed.map((o) => o.name).join(', ')}\n`);
  process.exitCode = 1;
}
