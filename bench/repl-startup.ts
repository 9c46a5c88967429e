// Start-up of `lender repl --sandbox`: from spawning the process to the first prompt, and to the
// session being connected (embedded sandbox started, logged in, catalog read). Median of --runs
// (default 5), one JSON line:
//
//   node --import tsx bench/repl-startup.ts [--runs N] [--bin OTHER/bin/lender.mjs]
//
// With --bin (an export of another commit, say), both bins run alternately in the same run and
// the line adds each one's medians and the ratios this checkout / the other: the machine's load
// then weighs on both alike.
//
// The prompt comes up before the sandbox is ready on purpose (the session connects behind it);
// both figures are reported so neither hides the other.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const BIN = fileURLToPath(new URL('../bin/lender.mjs', import.meta.url));

interface Run {
  promptMs: number;
  connectedMs: number;
}

function once(bin: string, home: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, 'repl', '--sandbox'], {
      env: { ...process.env, HOME: home, LENDER_REPL_HISTORY: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let promptMs: number | undefined;
    let connectedMs: number | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no prompt within 60 s; output: ${out.slice(-500)}`));
    }, 60_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const now = performance.now() - started;
      if (promptMs === undefined && out.includes('lender> ')) promptMs = now;
      if (connectedMs === undefined && out.includes('Connected as')) {
        connectedMs = now;
        child.stdin.write('.exit\n');
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0 || promptMs === undefined || connectedMs === undefined) {
        reject(new Error(`repl exited with ${code}; output: ${out.slice(-500)}`));
      } else {
        resolve({ promptMs, connectedMs });
      }
    });
  });
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, bin: { type: 'string' } } });
const runs = Number(values.runs);
const bins = values.bin === undefined ? [BIN] : [BIN, values.bin];
const home = mkdtempSync(join(tmpdir(), 'lender-repl-bench-'));
try {
  const results = bins.map((): Run[] => []);
  for (let i = 0; i < runs; i += 1) {
    for (const [k, bin] of bins.entries()) results[k]!.push(await once(bin, home));
  }
  const r = (n: number) => Math.round(n);
  const figures = results.map((rs) => ({
    promptMedianMs: r(median(rs.map((x) => x.promptMs))),
    connectedMedianMs: r(median(rs.map((x) => x.connectedMs))),
    promptMs: rs.map((x) => r(x.promptMs)),
    connectedMs: rs.map((x) => r(x.connectedMs)),
  }));
  const [mine, other] = figures;
  process.stdout.write(`${JSON.stringify({
    bench: 'repl-startup',
    node: process.version,
    runs,
    ...mine,
    ...(other !== undefined && {
      other: { bin: values.bin, ...other },
      promptRatio: Number((mine!.promptMedianMs / other.promptMedianMs).toFixed(2)),
      connectedRatio: Number((mine!.connectedMedianMs / other.connectedMedianMs).toFixed(2)),
    }),
  })}\n`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
