// The sinks side by side: the same export (D07 from a sandbox started with --scale N, so N rows)
// loaded by `lender sync --datasets D07` into NDJSON files, a DuckDB file and a PostgreSQL
// database, each an initial load into an empty target. Prints a table on stderr and one JSON line.
//
//   node --import tsx bench/sinks.ts [--rows 1000000] [--rounds 3] [--sinks ndjson,duckdb,postgres] [--from built|sources]
//                                    [--sync-flags='--concurrency 2']
//   (--scale is another name for --rows; --sync-flags are added to every sync, whatever its sink)
//
// By default the sync processes run the package's bin, which starts the compiled CLI, built first
// into dist/ (`npm run build`), as an installed package runs it; `--from sources` runs src/
// through tsx instead, which adds tsx's own memory (about 30 MB) to every figure.
//
// Every sync is a `lender sync` process of its own, run under GNU time (/usr/bin/time) for its
// wall time, CPU and peak RSS (the kernel's maxrss of that process, not a sample); without GNU
// time (or with LENDER_BENCH_NO_GNU_TIME=1), a preload in the sync process reports
// process.resourceUsage() at exit. The sandbox runs in
// a process of its own started once, and PostgreSQL is a throwaway cluster this bench starts
// (initdb from Debian's server, test/helpers/postgres.ts), each run into a fresh database. The CPU
// time of each side (the sync process, the sandbox, every PostgreSQL process) is read from /proc
// before and after each run, to show where the time goes, with the rest of the machine's busy
// time meanwhile ("other": kernel writeback, and other work that disturbs the run).
//
// The sinks run in a few rounds, in an order that rotates from round to round; the figures are
// medians, and each database sink's ratio to NDJSON is the median of the rounds' own ratios (runs
// adjacent in time share the machine's load). Goal: a database sink within 1.3× the NDJSON sink's
// wall time at 1,000,000 rows, with a peak RSS under 200 MB.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { adminQuery, createDatabase, startPostgres, type PgCluster } from '../test/helpers/postgres.ts';
import { readUsage, serveSandbox, USAGE_PRELOAD } from './export-common.ts';
import { median } from './stats.ts';

const SINKS = ['ndjson', 'duckdb', 'postgres'] as const;
type SinkKind = (typeof SINKS)[number];
const GOAL_RATIO = 1.3;
const GOAL_RSS_MB = 200;

const { values } = parseArgs({
  options: {
    rows: { type: 'string' },
    scale: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    sinks: { type: 'string', default: SINKS.join(',') },
    from: { type: 'string', default: 'built' },
    'sync-flags': { type: 'string', default: '' },
  },
  strict: true,
});
const rows = Number(values.rows ?? values.scale ?? 1_000_000);
const rounds = Number(values.rounds);
const syncFlags = values['sync-flags'].split(/\s+/).filter((f) => f !== '');
const sinks = values.sinks.split(',').map((s) => s.trim()).filter((s) => s !== '') as SinkKind[];
if (!Number.isInteger(rows) || rows < 1) throw new Error('--rows must be a positive whole number');
if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive whole number');
if (values.from !== 'built' && values.from !== 'sources') throw new Error('--from is built or sources');
for (const s of sinks) if (!SINKS.includes(s)) throw new Error(`--sinks: no sink named ${s}; there are ${SINKS.join(', ')}`);

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const fromSources = values.from === 'sources';
const MAIN = fileURLToPath(new URL(fromSources ? '../src/cli/main.ts' : '../bin/lender.cjs', import.meta.url));
if (!fromSources) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
const GNU_TIME = '/usr/bin/time';
const useGnuTime = process.env.LENDER_BENCH_NO_GNU_TIME !== '1' && existsSync(GNU_TIME) && (() => {
  try {
    execFileSync(GNU_TIME, ['-f', '%M', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

// ---- CPU seconds of processes, from /proc (Linux)

interface ProcTimes {
  ppid: number;
  /** utime + stime of the process itself, seconds. */
  own: number;
  /** cutime + cstime: its children that ended and were waited for, seconds. */
  reaped: number;
}

function procTimes(pid: number): ProcTimes | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), own: (Number(f[11]) + Number(f[12])) / TICKS, reaped: (Number(f[13]) + Number(f[14])) / TICKS };
  } catch {
    return undefined;
  }
}

/** CPU seconds of a process and all its children, living or ended (a PostgreSQL backend ends
 * with its connection; the postmaster reaps it, so its time lands in the postmaster's cutime). */
function treeCpu(root: number): number {
  const top = procTimes(root);
  if (top === undefined) return 0;
  let total = top.own + top.reaped;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const p = procTimes(Number(entry));
    if (p?.ppid === root) total += p.own;
  }
  return total;
}

/** CPU seconds the whole machine was busy (every process, the kernel's work included). */
function machineBusy(): number {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: all but idle and iowait.
    return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!) / TICKS;
  } catch {
    return NaN;
  }
}

// ---- one `lender sync` process

interface Run {
  sink: SinkKind;
  round: number;
  rows: number;
  wallS: number;
  rowsPerSec: number;
  peakRssMB: number;
  clientCpuS: number;
  sandboxCpuS: number;
  postgresCpuS?: number;
  /** CPU the machine spent meanwhile outside the processes above and this bench: kernel threads
   * (disk writeback of what the sink wrote) and other work on the machine, which disturbs the wall
   * time. Approximate: the sandbox's and PostgreSQL's CPU are read a moment later. */
  otherCpuS: number;
}

type Usage = Awaited<ReturnType<typeof readUsage>>;

async function runSync(args: string[], env: NodeJS.ProcessEnv, scratch: string): Promise<{ stdout: string; usage: Usage; wallS: number }> {
  const timeFile = join(scratch, 'time.txt');
  const usageFile = join(scratch, 'usage.json');
  const node = [process.execPath, ...(fromSources ? ['--import', 'tsx'] : []), ...(useGnuTime ? [] : ['--import', USAGE_PRELOAD]), MAIN, 'sync', ...args];
  const [file, argv] = useGnuTime ? [GNU_TIME, ['-o', timeFile, '-f', '%e %U %S %M', ...node]] : [node[0]!, node.slice(1)];
  const t0 = performance.now();
  const child = spawn(file, argv, { cwd: ROOT, env: { ...env, LENDER_BENCH_USAGE_FILE: usageFile }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const wallS = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`lender sync ${args.join(' ')} exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  let usage: Usage;
  if (useGnuTime) {
    // GNU time puts "Command exited with non-zero status" first when it did; the figures are last.
    const last = (await readFile(timeFile, 'utf8')).trim().split('\n').at(-1)!.split(' ').map(Number);
    usage = { cpuS: last[1]! + last[2]!, maxRssKB: last[3]! };
  } else {
    usage = await readUsage(usageFile);
  }
  return { stdout, usage, wallS };
}

// ---- the sandbox, in its own process, and the sync processes' connection to it

const sandbox = await serveSandbox(['--scale', String(rows)]);
const scratchRoot = await mkdtemp(join(tmpdir(), 'lender-bench-sinks-'));
let cluster: PgCluster | undefined;
let baselineRssMB = 0;
const runs: Run[] = [];
try {
  // The sync processes take the connection from the environment, the password never on a command line.
  const { DATABASE_URL: _d, LENDER_CREDENTIALS_FILE: _c, ...inherited } = process.env;
  const baseEnv: NodeJS.ProcessEnv = { ...inherited, ...sandbox.cliEnv() };

  // The sandbox builds D07 on its first read: done here, so no run pays for it.
  const agent = new Agent({ connect: { ca: sandbox.ca } });
  const login = await request(`${sandbox.authUrl}/admin/auth/demo/login`, {
    method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: sandbox.email, password: sandbox.password }),
  });
  const session = (await login.body.json()) as { token: string; lenderPublicId: string };
  const warm = await request(`${sandbox.baseUrl}/lenders/${session.lenderPublicId}/exports/S2/D07?limit=1`, {
    dispatcher: agent, headers: { authorization: `Bearer ${session.token}` },
  });
  await warm.body.text();
  if (warm.statusCode !== 200) throw new Error(`the sandbox answered ${warm.statusCode} to a first page of D07`);
  await agent.close();

  let postmaster: number | undefined;
  if (sinks.includes('postgres')) {
    cluster = await startPostgres();
    // The checkpointer's parent is the postmaster: its CPU and its children's are PostgreSQL's.
    const { rows: [checkpointer] } = await adminQuery<{ pid: number }>(cluster, "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
    postmaster = checkpointer === undefined ? undefined : procTimes(checkpointer.pid)?.ppid;
    if (postmaster === undefined) throw new Error('could not find the PostgreSQL postmaster in /proc');
  }

  // What `lender sync` costs in memory before it loads anything (node, tsx, the CLI), for scale.
  baselineRssMB = Math.round((await runSync(['--help'], baseEnv, scratchRoot)).usage.maxRssKB / 1024);

  const sandboxPid = sandbox.proc.pid!;
  for (let round = 0; round < rounds; round += 1) {
    const order = sinks.map((_, i) => sinks[(i + round) % sinks.length]!);
    for (const sink of order) {
      const scratch = await mkdtemp(join(scratchRoot, `${sink}-`));
      let env = baseEnv;
      let to: string;
      let database: string | undefined;
      if (sink === 'ndjson') to = `ndjson:${join(scratch, 'out')}`;
      else if (sink === 'duckdb') to = `duckdb:${join(scratch, 'lender.duckdb')}`;
      else {
        const db = await createDatabase(cluster!);
        database = db.database;
        env = { ...baseEnv, ...db.env };
        to = db.url;
      }
      const sandbox0 = procTimes(sandboxPid)!.own;
      const pg0 = postmaster === undefined ? 0 : treeCpu(postmaster);
      const busy0 = machineBusy();
      const self0 = process.cpuUsage();
      const { stdout, usage, wallS } = await runSync(['--datasets', 'D07', '--to', to, ...syncFlags], env, scratch);
      const busy = machineBusy() - busy0;
      const self = process.cpuUsage(self0);
      // Let the sync's backend end (its time then counts under the postmaster) before reading.
      await new Promise((r) => setTimeout(r, 300));
      const sandboxCpuS = procTimes(sandboxPid)!.own - sandbox0;
      const pgCpuS = postmaster === undefined ? 0 : treeCpu(postmaster) - pg0;
      const line = stdout.trim().split('\n').reverse().find((l) => l.startsWith('{'));
      const loaded = line === undefined ? undefined : (JSON.parse(line) as { datasets?: Record<string, { rows: number }> }).datasets?.D07?.rows;
      if (loaded !== rows) throw new Error(`lender sync --to ${sink} loaded ${loaded} rows of D07, not ${rows}`);
      const run: Run = {
        sink, round, rows: loaded, wallS: +wallS.toFixed(2), rowsPerSec: Math.round(loaded / wallS), peakRssMB: Math.round(usage.maxRssKB / 1024),
        clientCpuS: +usage.cpuS.toFixed(2), sandboxCpuS: +sandboxCpuS.toFixed(2),
        ...(sink === 'postgres' && { postgresCpuS: +pgCpuS.toFixed(2) }),
        otherCpuS: Math.max(0, +(busy - usage.cpuS - sandboxCpuS - pgCpuS - (self.user + self.system) / 1e6).toFixed(2)),
      };
      runs.push(run);
      process.stderr.write(`  round ${round + 1}/${rounds} ${sink.padEnd(8)} ${run.wallS.toFixed(1)} s  ${run.rowsPerSec.toLocaleString('en-US')} rows/s  ` +
        `peak RSS ${run.peakRssMB} MB  CPU: sync ${run.clientCpuS} s, sandbox ${run.sandboxCpuS} s` +
        `${run.postgresCpuS === undefined ? '' : `, PostgreSQL ${run.postgresCpuS} s`}, other ${run.otherCpuS} s\n`);
      // Each run starts from an empty target and the same free disk.
      await rm(scratch, { recursive: true, force: true });
      if (database !== undefined) {
        await adminQuery(cluster!, `DROP DATABASE ${database}`);
        await adminQuery(cluster!, 'CHECKPOINT');
      }
    }
  }
} finally {
  await cluster?.stop();
  await sandbox.close();
  await rm(scratchRoot, { recursive: true, force: true });
}

// ---- medians, ratios, the table and the JSON line

const r2 = (x: number): number => +x.toFixed(2);
/** A sink's medians over its runs' figures. */
interface Summary extends Omit<Run, 'sink' | 'round' | 'rows'> {
  /** Median over the rounds of this sink's wall time / the NDJSON sink's in the same round. */
  ratioToNdjson?: number;
  /** Worst peak RSS over the rounds. */
  maxPeakRssMB: number;
}
const summary: Partial<Record<SinkKind, Summary>> = {};
for (const sink of sinks) {
  const mine = runs.filter((r) => r.sink === sink);
  const ratios = sink === 'ndjson' || !sinks.includes('ndjson') ? [] : mine.map((r) => r.wallS / runs.find((n) => n.sink === 'ndjson' && n.round === r.round)!.wallS);
  const pg = mine.flatMap((r) => (r.postgresCpuS === undefined ? [] : [r.postgresCpuS]));
  summary[sink] = {
    wallS: r2(median(mine.map((r) => r.wallS))),
    rowsPerSec: median(mine.map((r) => r.rowsPerSec)),
    peakRssMB: median(mine.map((r) => r.peakRssMB)),
    maxPeakRssMB: Math.max(...mine.map((r) => r.peakRssMB)),
    clientCpuS: r2(median(mine.map((r) => r.clientCpuS))),
    sandboxCpuS: r2(median(mine.map((r) => r.sandboxCpuS))),
    otherCpuS: r2(median(mine.map((r) => r.otherCpuS))),
    ...(pg.length > 0 && { postgresCpuS: r2(median(pg)) }),
    ...(ratios.length > 0 && { ratioToNdjson: r2(median(ratios)) }),
  };
}

const databases = sinks.filter((s) => s !== 'ndjson');
const goals = {
  ratio: GOAL_RATIO,
  rssMB: GOAL_RSS_MB,
  // null: not measured (no database sink, or no NDJSON run to compare with).
  ratioMet: databases.length === 0 || !sinks.includes('ndjson') ? null : databases.every((s) => summary[s]!.ratioToNdjson! <= GOAL_RATIO),
  rssMet: sinks.every((s) => summary[s]!.maxPeakRssMB < GOAL_RSS_MB),
};

const header = ['sink', 'wall (median)', 'rows/s', 'peak RSS', 'wall / NDJSON', 'CPU s: sync', 'sandbox', 'PostgreSQL', 'other'];
const body = sinks.map((s) => {
  const m = summary[s]!;
  return [s, `${m.wallS.toFixed(1)} s`, m.rowsPerSec.toLocaleString('en-US'), `${m.peakRssMB} MB (max ${m.maxPeakRssMB})`,
    m.ratioToNdjson === undefined ? '' : `${m.ratioToNdjson}×`, String(m.clientCpuS), String(m.sandboxCpuS), m.postgresCpuS === undefined ? '' : String(m.postgresCpuS), String(m.otherCpuS)];
});
const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
const fmt = (row: string[]) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
process.stderr.write(`\nD07, ${rows.toLocaleString('en-US')} rows, ${rounds} round(s), medians; peak RSS of the sync process (${useGnuTime ? 'GNU time' : 'process.resourceUsage'}; ` +
  `\`lender sync --help\` alone: ${baselineRssMB} MB)\n` +
  `${fmt(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${body.map(fmt).join('\n')}\n` +
  `goal: database sink ≤ ${GOAL_RATIO}× NDJSON: ${goals.ratioMet === null ? 'not measured' : goals.ratioMet ? 'met' : 'missed'}; ` +
  `peak RSS < ${GOAL_RSS_MB} MB: ${goals.rssMet ? 'met' : 'missed'}\n\n`);

console.log(JSON.stringify({
  bench: 'sinks', dataset: 'D07', rows, rounds, syncFlags, rssFrom: useGnuTime ? 'gnu-time' : 'resourceUsage', baselineRssMB, ...summary, goals, runs, node: process.version,
}));
