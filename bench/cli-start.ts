// How fast the `lender` bin starts and exports in a fresh clone. The clone is this repository's
// last commit, cloned into a temporary folder, with node_modules linked and `npm run prepare`
// run as `npm ci` runs it (it builds dist/). Measured, each side by side with its baseline in
// the same rounds (spawned processes, wall time, medians):
//   - `lender --version` / `node -e 0`;
//   - `npx lender export D07 --limit 1000` (the bin, which runs dist/ when it is current) and
//     `node dist/src/cli/main.js export D07 --limit 1000`, each / a plain undici page loop
//     (bench/plain-page-loop.mjs), 300,000 rows to /dev/null.
// With --node PATH the spawned processes run that Node binary (e.g. Node 24).
// Each ratio is the median of its rounds' own ratios. Seven rounds by default: with three, the
// same code measured 0.98x to 1.09x through dist/ from one run to the next, against a goal of
// 1.05x.
// Prints one JSON line.
// Run: node --import tsx bench/cli-start.ts [--rows 300000] [--rounds 7] [--node PATH]
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, openSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { serveSandbox } from './export-common.ts';
import { median } from './stats.ts';

const { values } = parseArgs({ options: { rows: { type: 'string' }, rounds: { type: 'string' }, node: { type: 'string' } } });
const ROWS = Number(values.rows ?? 300_000);
const ROUNDS = Number(values.rounds ?? 7);
const NODE = values.node ?? process.execPath;
const ROOT = fileURLToPath(new URL('..', import.meta.url));

function must(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
}

/** Wall time of one process, ms; its stdout goes to /dev/null. */
async function timed(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const t0 = performance.now();
  const child = spawn(NODE, args, { env, stdio: ['ignore', openSync('/dev/null', 'w'), 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(0, 500)}`);
  return performance.now() - t0;
}

const dir = mkdtempSync(join(tmpdir(), 'lender-clone-'));
const clone = join(dir, 'lender-streams');
try {
  must('git', ['clone', '--quiet', ROOT, clone], dir);
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
  must('npm', ['run', 'prepare'], clone);
  const bin = join(clone, 'bin', 'lender.mjs');
  const dist = join(clone, 'dist', 'src', 'cli', 'main.js');

  // Start: 15 interleaved pairs.
  const idle: number[] = [];
  const version: number[] = [];
  for (let i = 0; i < 15; i += 1) {
    idle.push(await timed(['-e', '0']));
    version.push(await timed([bin, '--version']));
  }

  const s = await serveSandbox(['--scale', String(ROWS)]);
  try {
    const env = { PATH: process.env.PATH, ...s.cliEnv(), LENDER_CREDENTIALS_FILE: join(dir, 'no-credentials.json') };
    const loop = () => timed([join(ROOT, 'bench', 'plain-page-loop.mjs'), 'S2', 'D07', '1000'], env);
    const viaBin = () => timed([bin, 'export', 'D07', '--limit', '1000'], env);
    const viaDist = () => timed([dist, 'export', 'D07', '--limit', '1000'], env);
    await loop(); // warm-up: builds the table
    const runs = { loop: [] as number[], bin: [] as number[], dist: [] as number[] };
    const order = ['loop', 'bin', 'dist'] as const;
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let k = 0; k < order.length; k += 1) {
        const which = order[(round + k) % order.length]!;
        runs[which].push(await (which === 'loop' ? loop() : which === 'bin' ? viaBin() : viaDist()));
      }
    }
    const ratio = (which: 'bin' | 'dist') => +median(runs[which].map((ms, i) => ms / runs.loop[i]!)).toFixed(2);
    const nodeVersion = spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();
    console.log(JSON.stringify({
      bench: 'cli-start', rows: ROWS, rounds: ROUNDS, node: nodeVersion,
      nodeIdleMs: +median(idle).toFixed(1), versionMs: +median(version).toFixed(1), versionToNode: +(median(version) / median(idle)).toFixed(2),
      loopSeconds: +(median(runs.loop) / 1000).toFixed(2), binSeconds: +(median(runs.bin) / 1000).toFixed(2), distSeconds: +(median(runs.dist) / 1000).toFixed(2),
      binToLoop: ratio('bin'), distToLoop: ratio('dist'),
    }));
  } finally {
    await s.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
