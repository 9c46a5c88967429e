// Shared pieces of the resilience suites (test/resilience/): running the `lender` CLI as a real
// child process with a hard time limit, a `lender sandbox` child, NDJSON files as rows, row
// identity per dataset, and the secret scanner every suite feeds what the product printed or wrote.
import { Rng } from '../../src/prng.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent } from 'undici';
import { datasetInfo } from '../../src/core/catalog.ts';
import { findLeaks } from '../../src/session/secrets.ts';
import { requestJson, TEST_SANDBOX_FLAGS, type JsonResponse, type RequestOptions } from './sandbox.ts';

/** The installed `lender` binary (package.json bin): what users run. */
export const LENDER_BIN = new URL('../../bin/lender.mjs', import.meta.url).pathname;

/** LENDER_SOAK=1 turns every scenario's figures up (more kills, more records, more time). */
export const SOAK = process.env.LENDER_SOAK === '1';

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the time limit killed the process: the caller asserts it is false (no hang). */
  timedOut: boolean;
  ms: number;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, then stdin is closed. Without it stdin is closed at once. */
  input?: string | Buffer;
  /** Hard limit; the child is SIGKILLed past it. Default 60 s. */
  timeoutMs?: number;
  cwd?: string;
}

/**
 * The environment of a CLI child: only what Node needs plus `extra`. The credentials file is
 * pointed at a path that does not exist, so the developer's own file is never read by tests.
 */
export function isolatedEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    LENDER_CREDENTIALS_FILE: '/nonexistent/lender-streams-test/credentials.json',
    XDG_CONFIG_HOME: '/nonexistent/lender-streams-test',
    NO_COLOR: '1',
  };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export function spawnLender(args: readonly string[], opts: Omit<RunOptions, 'input' | 'timeoutMs'> = {}): ChildProcess {
  return spawn(process.execPath, [LENDER_BIN, ...args], {
    env: opts.env ?? isolatedEnv(),
    cwd: opts.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Runs `lender ...args` to its end (or the time limit) and collects everything it printed. */
export async function runLender(args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const started = Date.now();
  const child = spawnLender(args, opts);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  // A child that exits before reading its stdin makes the write fail with EPIPE; that is its answer.
  child.stdin!.on('error', () => undefined);
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  else child.stdin!.end();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, opts.timeoutMs ?? 60_000);
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  return { code, signal, stdout, stderr, timedOut, ms: Date.now() - started };
}

export interface SandboxChildInfo {
  authUrl: string;
  baseUrl: string;
  caFile: string;
  lenders: { lender: string; email: string; password: string; lenderPublicId: string }[];
}

export interface SandboxChild {
  readonly info: SandboxChildInfo;
  readonly agent: Agent;
  /** LENDER_* variables for one of its lenders (default demo), trusting its CA through LENDER_CA_FILE. */
  env(lender?: string, extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** JSON request to the sandbox (admin endpoints, logins). */
  request(method: string, path: string, options?: RequestOptions): Promise<JsonResponse>;
  stats(): Promise<Record<string, number>>;
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `lender sandbox --port 0 ...args` and resolves with its first stdout line. */
export async function startSandboxChild(args: readonly string[]): Promise<SandboxChild> {
  const child = spawnLender(['sandbox', '--port', '0', ...TEST_SANDBOX_FLAGS, ...args]);
  child.stdin!.end();
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => line as string),
    once(child, 'exit').then(([code]) => {
      throw new Error(`lender sandbox exited (${code}) before printing its JSON line: ${stderr}`);
    }),
  ]);
  const info = JSON.parse(first) as SandboxChildInfo;
  const agent = new Agent({ connect: { ca: readFileSync(info.caFile, 'utf8') } });
  const request = (method: string, path: string, options?: RequestOptions) => requestJson(agent, info.authUrl, method, path, options);
  return {
    info,
    agent,
    env(lender = 'demo', extra = {}) {
      const l = info.lenders.find((x) => x.lender === lender)!;
      return isolatedEnv({
        LENDER_AUTH_URL: info.authUrl,
        LENDER_SUBDOMAIN: l.lender,
        LENDER_EMAIL: l.email,
        LENDER_PASSWORD: l.password,
        LENDER_CA_FILE: info.caFile,
        ...extra,
      });
    },
    request,
    async stats() {
      const res = await request('GET', '/__sandbox/stats');
      return res.body as Record<string, number>;
    },
    stderr: () => stderr,
    async stop() {
      lines.close();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      await agent.close();
    },
  };
}

// ---- rows

export type Row = Record<string, unknown>;

export function readNdjsonFile(path: string): Row[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Row);
}

/** Every <code>.ndjson file of a sync output folder, by dataset code. */
export function readSyncFolder(dir: string): Record<string, Row[]> {
  const out: Record<string, Row[]> = {};
  for (const name of readdirSync(dir).sort()) {
    const match = /^(D\d\d)\.ndjson$/.exec(name);
    if (match && statSync(join(dir, name)).isFile()) out[match[1]!] = readNdjsonFile(join(dir, name));
  }
  return out;
}

export function cursorFieldOf(dataset: string): string {
  return datasetInfo(dataset)?.cursorField ?? 'updated_at';
}

/**
 * The identity of a row across versions. public_id everywhere (the documented upsert key), except D16 where it is
 * the case id shared by several deals; a deal's created_at never changes, so the pair names it.
 * Suites assert the key is unique within a clean walk, so a wrong guess here cannot hide a loss.
 */
export function rowKey(dataset: string, row: Row): string {
  const id = String(row.public_id);
  return dataset === 'D16' ? `${id}|${String(row.created_at)}` : id;
}

/** Latest version of each row by its cursor field (later wins, ties keep the later read). */
export function latestByKey(dataset: string, rows: readonly Row[]): Map<string, Row> {
  const field = cursorFieldOf(dataset);
  const out = new Map<string, Row>();
  for (const row of rows) {
    const key = rowKey(dataset, row);
    const prev = out.get(key);
    if (prev === undefined || String(row[field]) >= String(prev[field])) out.set(key, row);
  }
  return out;
}

/** Rows as a sorted list of their JSON lines: exact-content comparison, order-free. */
export function canonicalLines(rows: Iterable<Row>): string[] {
  return [...rows].map((r) => JSON.stringify(r)).sort();
}

// ---- secrets

/**
 * Collects every text the product printed or wrote during a suite, then proves no secret is in
 * any of them: the known values (passwords, tokens of our own logins) and any JWT-looking string,
 * since each login issues different tokens and a child's tokens are never known to the test.
 * Reports say which capture and which kind of secret (findLeaks), never the value.
 */
export class SecretScan {
  readonly #captures: { label: string; text: string }[] = [];
  readonly #secrets = new Set<string>();
  bytes = 0;

  secret(...values: (string | undefined)[]): void {
    for (const v of values) if (v !== undefined && v.length >= 6) this.#secrets.add(v);
  }

  capture(label: string, text: string | Buffer): void {
    const s = typeof text === 'string' ? text : text.toString('utf8');
    this.bytes += Buffer.byteLength(s);
    this.#captures.push({ label, text: s });
  }

  captureRun(label: string, run: RunResult): void {
    this.capture(`${label} stdout`, run.stdout);
    this.capture(`${label} stderr`, run.stderr);
  }

  /** Each file under `dir` (recursively), e.g. a sync output folder with its state file. */
  captureFolder(label: string, dir: string): void {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) this.captureFolder(`${label}/${name}`, path);
      else this.capture(`${label}/${name}`, readFileSync(path));
    }
  }

  get count(): number {
    return this.#captures.length;
  }

  get secretCount(): number {
    return this.#secrets.size;
  }

  /** "<capture>: <kind>" for each leak; empty when everything is clean. */
  leaks(): string[] {
    const secrets = [...this.#secrets];
    return this.#captures.flatMap(({ label, text }) => findLeaks(text, secrets).map((kind) => `${label}: ${kind}`));
  }
}

/** Logs in over HTTPS with the given agent and returns the session (to learn real token values). */
export async function loginTokens(
  agent: Agent, authUrl: string, lender: string, email: string, password: string,
): Promise<{ token: string; refreshToken: string; lenderPublicId: string }> {
  const res = await requestJson(agent, authUrl, 'POST', `/admin/auth/${lender}/login`, { body: { email, password } });
  if (res.status !== 200) throw new Error(`login as ${lender} answered ${res.status}`);
  return res.body as { token: string; refreshToken: string; lenderPublicId: string };
}

/** The suites' own random choices, seeded per run so a failure can be replayed. */
export function prng(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}

/** The seed of this run: LENDER_SEED when given (to replay a failure), else the clock. */
export function runSeed(): number {
  const given = process.env.LENDER_SEED;
  return given !== undefined && given !== '' ? Number(given) : Date.now() % 1_000_000;
}
