// A `lender sync` child SIGKILLed again and again across a multi-dataset load
// against a `lender sandbox` child (latency, light faults, short tokens). Half the kills land on a
// timer, half the instant a state temp file appears (a kill during the state write). After every
// kill the state file must parse; at the end each file holds every row, and the only duplicates
// are rows of the one page that was written but not yet checkpointed when a kill landed.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, readFileSync, readdirSync, watch } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LenderClient } from '../../src/client/client.ts';
import type { DatasetRef } from '../../src/core/types.ts';
import {
  SOAK, SecretScan, canonicalLines, prng, runLender, runSeed, spawnLender, startSandboxChild, type SandboxChild,
} from '../helpers/resilience.ts';
import { EVERYTHING, plainWalk } from '../helpers/plain-walk.ts';

const KILLS = SOAK ? 24 : 8;
const SCALE = SOAK ? 2000 : 600;
// The load must outlast the kills (each killed run still moves it forward, and a run that finishes
// before the last kill fails the test): soak mode reads more via datasets, more slowly.
const LATENCY_MS = SOAK ? 60 : 50;
const LIMIT = 50;
const DATASETS = ['D07', 'D03', 'D01', 'D21', 'D26', 'D23', ...(SOAK ? ['D17', 'D18', 'D19', 'D22'] : [])];

/** When a kill lands: after a random time; the instant a state temp file appears (mid state
 * write); the instant rows are appended to a data file (between the rows and their checkpoint). */
type Mode = 'timer' | 'state-write' | 'rows-written';
const MODES: readonly Mode[] = ['timer', 'state-write', 'rows-written'];

interface KillRecord {
  mode: Mode;
  /** Complete lines in each dataset file right after the kill. */
  lines: Record<string, number>;
  stateParsed: boolean;
  tmpFiles: number;
}

function completeLines(path: string): number {
  if (!existsSync(path)) return 0;
  const buf = readFileSync(path);
  let n = 0;
  for (const byte of buf) if (byte === 0x0a) n++;
  return n;
}

describe('crash and resume: lender sync killed with SIGKILL at random points', () => {
  let sandbox: SandboxChild;
  let dir: string;
  const seed = runSeed();
  const random = prng(seed);
  const scan = new SecretScan();

  before(async () => {
    sandbox = await startSandboxChild([
      '--seed', '11', '--scale', String(SCALE), '--latency', String(LATENCY_MS), '--token-ttl', '3',
      '--faults', '500=0.02,reset=0.01',
    ]);
    dir = await mkdtemp(join(tmpdir(), 'lender-crash-'));
    for (const l of sandbox.info.lenders) scan.secret(l.password);
  });

  after(async () => {
    await sandbox?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it(`survives ${KILLS} kills: every row present, duplicates only from unsaved pages, state always readable`, async (ctx) => {
    ctx.diagnostic(`seed=${seed} (LENDER_SEED=${seed} replays the kill points)`);
    const out = join(dir, 'out');
    const statePath = join(out, 'state.json');
    const args = ['sync', '--out', out, '--state', statePath, '--datasets', DATASETS.join(','), '--limit', String(LIMIT)];
    const kills: KillRecord[] = [];
    let finishedEarly = 0;

    while (kills.length < KILLS) {
      const mode = MODES[kills.length % MODES.length]!;
      const child = spawnLender(args, { env: sandbox.env('demo') });
      child.stdin!.end();
      let stdout = '';
      let stderr = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
      let watcher: ReturnType<typeof watch> | undefined;
      let timer: NodeJS.Timeout | undefined;
      if (mode === 'timer') {
        // Start-up (tsx, login) takes most of a second; kill somewhere in the load after it.
        timer = setTimeout(() => child.kill('SIGKILL'), 700 + Math.floor(random() * 1800));
      } else {
        const target = 1 + Math.floor(random() * (mode === 'state-write' ? 40 : 8));
        const matches = mode === 'state-write' ? (name: string) => name.endsWith('.tmp') : (name: string) => name.endsWith('.ndjson');
        let seen = 0;
        const arm = () => {
          watcher = watch(out, (_event, name) => {
            if (typeof name === 'string' && matches(name) && ++seen >= target) child.kill('SIGKILL');
          });
        };
        if (existsSync(out)) arm();
        else timer = setTimeout(function wait() {
          if (existsSync(out)) arm();
          else timer = setTimeout(wait, 20);
        }, 20);
      }
      const [code, signal] = await exited;
      watcher?.close();
      clearTimeout(timer);
      scan.capture(`killed run ${kills.length} stdout`, stdout);
      scan.capture(`killed run ${kills.length} stderr`, stderr);
      if (signal !== 'SIGKILL') {
        // The load finished (or failed on its own) before the kill: nothing to resume from.
        assert.equal(code, 0, `an unkilled run ended with ${code}: ${stderr}`);
        finishedEarly += 1;
        break;
      }
      let stateParsed = true;
      if (existsSync(statePath)) {
        const parsed = JSON.parse(readFileSync(statePath, 'utf8')) as { version: number; datasets: object };
        stateParsed = parsed.version === 1 && typeof parsed.datasets === 'object';
        scan.capture(`state after kill ${kills.length}`, readFileSync(statePath));
      }
      assert.ok(stateParsed, `state file unreadable after kill ${kills.length}`);
      const lines = Object.fromEntries(DATASETS.map((d) => [d, completeLines(join(out, `${d}.ndjson`))]));
      // A kill on the timer can land before the run created --out at all.
      const tmpFiles = existsSync(out) ? readdirSync(out).filter((n) => n.endsWith('.tmp')).length : 0;
      kills.push({ mode, lines, stateParsed, tmpFiles });
    }

    const final = await runLender(args, { env: sandbox.env('demo'), timeoutMs: 120_000 });
    scan.captureRun('final run', final);
    assert.equal(final.timedOut, false);
    assert.equal(final.code, 0, final.stderr);
    const summary = JSON.parse(final.stdout.trim().split('\n').at(-1)!) as { datasets: Record<string, { mode: string }> };
    assert.deepEqual(Object.keys(summary.datasets).sort(), [...DATASETS].sort());

    await sandbox.request('POST', '/__sandbox/faults', { body: { latencyMs: 0, faults: {} } });
    const client = await LenderClient.login({
      authUrl: sandbox.info.authUrl, ...sandbox.info.lenders[0]!, ca: readFileSync(sandbox.info.caFile, 'utf8'),
    });
    let rows = 0;
    let duplicates = 0;
    try {
      for (const code of DATASETS) {
        const text = readFileSync(join(out, `${code}.ndjson`), 'utf8');
        assert.ok(text.endsWith('\n'), `${code}: the file ends with a whole line`);
        const lines = text.split('\n').slice(0, -1);
        for (const line of lines) JSON.parse(line);
        const expected = canonicalLines(await plainWalk(client, code as DatasetRef, EVERYTHING));
        assert.deepEqual([...new Set(lines)].sort(), expected, `${code}: rows differ from the service's`);
        rows += expected.length;
        // Where each duplicate may come from: the page right before a kill point, written again
        // right after it (the re-run starts where the kill left the file). Compared with the
        // row's latest copy, not its first: a run killed right after re-writing that page leaves
        // it unsaved once more, and the next run writes it a third time.
        const boundaries = [...new Set(kills.map((k) => k.lines[code]!))].sort((a, b) => a - b);
        const lastAt = new Map<string, number>();
        lines.forEach((line, i) => {
          const j = lastAt.get(line);
          lastAt.set(line, i);
          if (j === undefined) return;
          duplicates += 1;
          const b = boundaries.filter((x) => x <= i).at(-1);
          assert.ok(b !== undefined && j >= b - LIMIT && j < b && i < b + LIMIT,
            `${code}: line ${i + 1} repeats line ${j + 1}, which is not the unsaved page of a kill (kill points ${boundaries.join(',')})`);
        });
      }
    } finally {
      await client.close();
    }
    assert.ok(kills.length >= KILLS || finishedEarly === 1);
    assert.equal(kills.length, KILLS, `the load finished after only ${kills.length} kills; make it longer`);
    scan.captureFolder('crash sync output', out);
    const byMode = MODES.map((m) => `${m}:${kills.filter((k) => k.mode === m).length}`).join(' ');
    const litter = Math.max(0, ...kills.map((k) => k.tmpFiles));
    ctx.diagnostic(`kills=${kills.length} (${byMode}) rows=${rows} duplicatesWritten=${duplicates} lost=0 statesParsed=${kills.filter((k) => k.stateParsed).length} maxTmpLeft=${litter}`);
  });

  it('printed and wrote no password or token', () => {
    assert.ok(scan.count > 0);
    assert.deepEqual(scan.leaks(), []);
  });
});
