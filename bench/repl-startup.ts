// Start-up of `lender repl --sandbox`: from spawning the process to the first prompt, and to the
// session being connected (embedded sandbox started, logged in, catalog read). Median of --runs
// (default 5), one JSON line:
//
//   node --import tsx bench/repl-startup.ts [--runs N]
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

function once(home: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [BIN, 'repl', '--sandbox'], {
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

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);
const home = mkdtempSync(join(tmpdir(), 'lender-repl-bench-'));
try {
  const results: Run[] = [];
  for (let i = 0; i < runs; i += 1) results.push(await once(home));
  const r = (n: number) => Math.round(n);
  process.stdout.write(`${JSON.stringify({
    bench: 'repl-startup',
    node: process.version,
    runs,
    promptMedianMs: r(median(results.map((x) => x.promptMs))),
    connectedMedianMs: r(median(results.map((x) => x.connectedMs))),
    promptMs: results.map((x) => r(x.promptMs)),
    connectedMs: results.map((x) => r(x.connectedMs)),
  })}\n`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
