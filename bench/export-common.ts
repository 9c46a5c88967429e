// Shared by the export benches (and account-writer.ts): a sandbox in its own process (so its
// memory and CPU do not count against the client being measured), a logged-in client, and sinks.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { LenderClient } from '../src/client/client.ts';

const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;

/**
 * A preload for a process whose peak RSS and CPU a bench reads (`--import USAGE_PRELOAD`): at exit
 * it writes its resource usage into the file named by LENDER_BENCH_USAGE_FILE. A file, not a
 * descriptor: the CLI starting Node again (docs/cli.md#memory) keeps none beyond stdio, while the
 * kernel keeps the process's peak and CPU times across that start.
 */
export const USAGE_PRELOAD = 'data:text/javascript,' + encodeURIComponent(
  "import { writeFileSync } from 'node:fs'; process.on('exit', () => { const u = process.resourceUsage(); " +
  'writeFileSync(process.env.LENDER_BENCH_USAGE_FILE, JSON.stringify({ maxRssKB: u.maxRSS, cpuS: (u.userCPUTime + u.systemCPUTime) / 1e6 })); });',
);

/** What USAGE_PRELOAD wrote. */
export async function readUsage(file: string): Promise<{ maxRssKB: number; cpuS: number }> {
  return JSON.parse(await readFile(file, 'utf8')) as { maxRssKB: number; cpuS: number };
}

export interface ServedSandbox {
  authUrl: string;
  baseUrl: string;
  ca: Buffer;
  /** The CA's file, written by the sandbox and kept while it runs. */
  caFile: string;
  email: string;
  password: string;
  proc: ChildProcess;
  /** What a `lender` command needs to log in as the demo lender over the sandbox's CA. */
  cliEnv(): NodeJS.ProcessEnv;
  login(): Promise<LenderClient>;
  close(): Promise<void>;
}

/** Starts `lender sandbox ...args` and reads its JSON line; `stderr` is where its stderr goes. */
export async function serveSandbox(args: string[], opts: { stderr?: 'ignore' | 'inherit' } = {}): Promise<ServedSandbox> {
  const proc = spawn(process.execPath, ['--import', 'tsx', MAIN, 'sandbox', ...args], { stdio: ['ignore', 'pipe', opts.stderr ?? 'ignore'] });
  const line = await Promise.race([
    once(createInterface({ input: proc.stdout! }), 'line').then(([first]) => first as string),
    once(proc, 'exit').then(([code]) => {
      throw new Error(`lender sandbox exited with ${code}`);
    }),
  ]);
  const served = JSON.parse(line) as { authUrl: string; baseUrl: string; caFile: string; lenders: { lender: string; email: string; password: string }[] };
  const demo = served.lenders.find((l) => l.lender === 'demo');
  if (demo === undefined) throw new Error('the sandbox listed no demo lender');
  const ca = await readFile(served.caFile);
  return {
    authUrl: served.authUrl, baseUrl: served.baseUrl, ca, caFile: served.caFile, email: demo.email, password: demo.password, proc,
    cliEnv: () => ({
      LENDER_AUTH_URL: served.authUrl, LENDER_SUBDOMAIN: 'demo', LENDER_EMAIL: demo.email, LENDER_PASSWORD: demo.password, LENDER_CA_FILE: served.caFile,
    }),
    login: () => LenderClient.login({ authUrl: served.authUrl, lender: 'demo', email: demo.email, password: demo.password, ca }),
    async close() {
      proc.kill('SIGTERM');
      await once(proc, 'exit');
    },
  };
}

/** A text sink that counts bytes; with delayEvery it yields to the event loop for delayMs every
 * so many writes, standing in for a slow disk or network. */
export function countingSink(delayEvery = 0, delayMs = 0, msPerMB = 0): Writable & { bytes: number } {
  let writes = 0;
  const sink = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _enc, callback) {
      sink.bytes += chunk.length;
      writes += 1;
      // msPerMB models a consumer whose work grows with what it is given (a database upsert, say):
      // the same bytes cost the same time whichever way they arrive.
      const work = (chunk.length / 1_048_576) * msPerMB;
      if (delayEvery > 0 && writes % delayEvery === 0) setTimeout(callback, delayMs + work);
      else if (work > 0) setTimeout(callback, work);
      else callback();
    },
  }) as Writable & { bytes: number };
  sink.bytes = 0;
  return sink;
}
