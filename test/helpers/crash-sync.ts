// `lender sync` into one sink, SIGKILLed again and again at random instants across a
// multi-dataset load against a `lender sandbox` child (latency, light faults, short tokens), then
// run to the end. Each sink says where its kills can land (a timer; the instant a commit touches
// its files; inside a database transaction) and how to read back what it holds. The final content
// must equal the reference walk of the sandbox: every row, each once.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync, readFileSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { TestContext } from 'node:test';
import { LenderClient } from '../../src/client/client.ts';
import type { DatasetRef, ExportRow } from '../../src/core/types.ts';
import { datasetInfo } from '../../src/core/catalog.ts';
import { contentRowKey, identityFor } from '../../src/exports/highwater.ts';
import { SOAK, SecretScan, prng, runLender, runSeed, spawnLender, startSandboxChild, type SandboxChild } from './resilience.ts';
import { EVERYTHING, plainWalk } from './plain-walk.ts';

export const LIMIT = 50;
export const DATASETS = ['D07', 'D03', 'D01', 'D21', 'D16', 'D23', 'D26', ...(SOAK ? ['D17', 'D18', 'D19', 'D22'] : [])];

/** Where one kill lands: `arm` starts watching for the moment and calls `kill` then; its result stops watching. */
export interface KillPoint {
  name: string;
  arm(kill: () => void, random: () => number, child: ChildProcess): () => void;
}

export interface CrashTarget {
  /** `--to …` and anything else the sink needs on the command line. */
  args: string[];
  env?: NodeJS.ProcessEnv;
  points: KillPoint[];
  /** After each kill: whatever must hold at any instant (the state parses, the database opens). */
  afterKill?(): Promise<void>;
  /** What the sink holds for a dataset, one string per stored row, as `rowIdentity` renders it. */
  readBack(dataset: string): Promise<string[]>;
  /** Renders a reference row the way readBack renders a stored one. */
  rowIdentity(dataset: string, row: Record<string, unknown>): string;
}

export interface CrashRun {
  kills: number;
  byPoint: Record<string, number>;
  rows: number;
  /** Rows the final, unkilled run loaded. */
  finalRows: number;
  seed: number;
}

/** A row as a database sink's table is compared: its identity and its cursor value (ISO, UTC, ms). */
export function tableIdentity(code: string, row: Record<string, unknown>): string {
  const cursor = datasetInfo(code)!.cursorField;
  const key = identityFor(code) === 'content' ? contentRowKey(row as ExportRow) : String(row.public_id);
  return `${key}|${new Date(String(row[cursor])).toISOString()}`;
}

/** The identity column of a dataset's table. */
export function keyColumnOf(code: string): string {
  return identityFor(code) === 'content' ? '_row_key' : 'public_id';
}

/** A kill after a random time inside the load (start-up, tsx and the login, takes most of a second). */
export const timerKill: KillPoint = {
  name: 'timer',
  arm(kill, random) {
    const timer = setTimeout(kill, 700 + Math.floor(random() * 1800));
    return () => clearTimeout(timer);
  },
};

/** Kills at the `target`-th change of a file of `out` whose name matches; waits for `out` to exist. */
export function fileKill(name: string, out: string, matches: (file: string) => boolean, most: number): KillPoint {
  return {
    name,
    arm(kill, random) {
      const target = 1 + Math.floor(random() * most);
      let seen = 0;
      let watcher: ReturnType<typeof watch> | undefined;
      let timer: NodeJS.Timeout | undefined;
      const start = () => {
        watcher = watch(out, (_event, file) => {
          if (typeof file === 'string' && matches(file) && ++seen >= target) kill();
        });
      };
      const wait = () => {
        if (existsSync(out)) start();
        else timer = setTimeout(wait, 20);
      };
      wait();
      return () => {
        clearTimeout(timer);
        watcher?.close();
      };
    },
  };
}

export interface CrashSandbox {
  sandbox: SandboxChild;
  dir: string;
  scan: SecretScan;
  stop(): Promise<void>;
}

/** The sandbox the kills run against: latency and rows so a load outlasts them, faults and
 * 3-second tokens. At scale 1,500 a quiet machine left as few as 150 rows for the run after the
 * 20th kill, and once finished before it; at 3,000, 5,000 to 10,000 of 15,900. */
export async function startCrashSandbox(scale = 3000): Promise<CrashSandbox> {
  const sandbox = await startSandboxChild([
    '--seed', '11', '--scale', String(scale), '--latency', String(SOAK ? 60 : 50), '--token-ttl', '3',
    '--faults', '500=0.02,reset=0.01',
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'lender-crash-'));
  const scan = new SecretScan();
  for (const l of sandbox.info.lenders) scan.secret(l.password);
  return {
    sandbox, dir, scan,
    async stop() {
      await sandbox.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Kills `lender sync` `kills` times, cycling through the target's kill points, then runs it to the end and compares. */
export async function crashAndCompare(ctx: TestContext, env: CrashSandbox, target: CrashTarget, kills: number): Promise<CrashRun> {
  const seed = runSeed();
  const random = prng(seed);
  ctx.diagnostic(`seed=${seed} (LENDER_SEED=${seed} replays the kill points)`);
  const args = ['sync', ...target.args, '--datasets', DATASETS.join(','), '--limit', String(LIMIT)];
  const childEnv = { ...env.sandbox.env('demo'), ...target.env };
  const byPoint: Record<string, number> = {};
  let done = 0;
  while (done < kills) {
    const point = target.points[done % target.points.length]!;
    const child = spawnLender(args, { env: childEnv });
    child.stdin!.end();
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
    const disarm = point.arm(() => child.kill('SIGKILL'), random, child);
    const [code, signal] = await exited;
    disarm();
    env.scan.capture(`killed run ${done} stdout`, stdout);
    env.scan.capture(`killed run ${done} stderr`, stderr);
    // A run that ended on its own finished the load before the kill: the test needs a longer one.
    assert.equal(signal, 'SIGKILL', `run ${done} (${point.name}) ended by itself with ${code} before its kill: ${stderr.slice(-500)}`);
    await target.afterKill?.();
    byPoint[point.name] = (byPoint[point.name] ?? 0) + 1;
    done += 1;
  }

  const final = await runLender(args, { env: childEnv, timeoutMs: 180_000 });
  env.scan.captureRun('final run', final);
  assert.equal(final.timedOut, false);
  assert.equal(final.code, 0, final.stderr);
  const summary = JSON.parse(final.stdout.trim().split('\n').at(-1)!) as { datasets: Record<string, { rows: number }> };
  assert.deepEqual(Object.keys(summary.datasets).sort(), [...DATASETS].sort());
  // How much was left for the final run: the margin by which the load outlasted the kills.
  const finalRows = Object.values(summary.datasets).reduce((n, d) => n + d.rows, 0);

  await env.sandbox.request('POST', '/__sandbox/faults', { body: { latencyMs: 0, faults: {} } });
  const client = await LenderClient.login({
    authUrl: env.sandbox.info.authUrl, ...env.sandbox.info.lenders[0]!, ca: readFileSync(env.sandbox.info.caFile, 'utf8'),
  });
  let rows = 0;
  try {
    for (const code of DATASETS) {
      const reference = (await plainWalk(client, code as DatasetRef, EVERYTHING)).map((r) => target.rowIdentity(code, r)).sort();
      const stored = (await target.readBack(code)).sort();
      // Equal as lists, not as sets: a row stored twice is as wrong as a row missing.
      assert.deepEqual(stored, reference, `${code}: the stored rows differ from the service's`);
      rows += reference.length;
    }
  } finally {
    await client.close();
  }
  return { kills: done, byPoint, rows, finalRows, seed };
}
