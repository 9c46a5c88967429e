// Resource exhaustion of the sandbox: `lender sandbox` runs in a process of its own while --uploads
// concurrent 10 MB uploads without a token go to a path that does not exist (each worker starts a
// new one as soon as the last is answered, for --seconds and at most 100 times), and one ordinary
// client, logged in, reads the catalog and pushes small batches throughout. Prints one JSON line
// with the sandbox's peak RSS, what the flood was answered, and the ordinary client's worst
// latency and refusals. All traffic goes to 127.0.0.1 and stops after --seconds. The flood comes
// from two processes of its own, so the client's latency is the sandbox's, not this process's.
//
//   node --import tsx bench/sandbox-flood.ts [--uploads 150] [--mb 10] [--seconds 15]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { median } from './stats.ts';

interface FloodJob {
  host: string;
  port: number;
  ca: string;
  uploads: number;
  uploadBytes: number;
  seconds: number;
}

interface FloodResult {
  answers: Record<string, number>;
  errors: number;
}

const FLOOD_PROCESSES = 2;
/** Each concurrent upload is repeated at most this often, however fast the answers come. */
const MAX_UPLOADS_PER_WORKER = 100;

/** One process's share of the flood: `uploads` at once, each worker starting a new one when its
 * last is answered. One shared buffer is the body of them all. */
async function runFlood(job: FloodJob): Promise<FloodResult> {
  const payload = Buffer.alloc(job.uploadBytes, 0x20);
  const result: FloodResult = { answers: {}, errors: 0 };
  const deadline = Date.now() + job.seconds * 1000;
  const upload = (): Promise<void> =>
    new Promise((resolve) => {
      const req = https.request({
        host: job.host, port: job.port, path: '/no/such/path', method: 'POST', ca: job.ca, agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(payload.length) },
      });
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        req.destroy();
        resolve();
      };
      req.once('response', (res) => {
        result.answers[res.statusCode ?? 0] = (result.answers[res.statusCode ?? 0] ?? 0) + 1;
        res.resume();
        res.once('end', finish);
        res.once('error', finish);
      });
      req.once('error', () => {
        if (!done) result.errors += 1;
        finish();
      });
      req.setTimeout(Math.max(1000, deadline - Date.now()), finish);
      req.end(payload);
    });
  await Promise.all(Array.from({ length: job.uploads }, async () => {
    for (let n = 0; n < MAX_UPLOADS_PER_WORKER && Date.now() < deadline; n++) await upload();
  }));
  return result;
}

const SELF = fileURLToPath(import.meta.url);
const FLOOD_FLAG = '--flood-process';

if (process.argv[2] === FLOOD_FLAG) {
  const running = runFlood(JSON.parse(process.argv[3]!) as FloodJob);
  process.stdout.write('started\n');
  process.stdout.write(JSON.stringify(await running));
  process.exit(0);
}

const quick = process.env.LENDER_BENCH_QUICK === '1';
const { values } = parseArgs({
  options: {
    uploads: { type: 'string', default: quick ? '30' : '150' },
    mb: { type: 'string', default: '10' },
    seconds: { type: 'string', default: quick ? '5' : '15' },
  },
});
const uploads = Number(values.uploads);
const uploadBytes = Number(values.mb) * 1024 * 1024;
const seconds = Number(values.seconds);
const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));

interface Started {
  authUrl: string;
  caFile: string;
  lenders: { lender: string; email: string; password: string; lenderPublicId: string }[];
}

// ---- the sandbox, in its own process so its RSS is its own
const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'sandbox', '--port', '0', '--scale', '20'], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
let childErr = '';
child.stderr.on('data', (c: Buffer) => (childErr += c.toString()));
const started = await new Promise<Started>((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    const nl = out.indexOf('\n');
    if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as Started);
  });
  child.once('exit', (code) => reject(new Error(`lender sandbox exited (${code}): ${childErr}`)));
});
const ca = readFileSync(started.caFile, 'utf8');
const url = new URL(started.authUrl);

/** Resident set of the sandbox now and its peak so far, in MB, from Linux's /proc (0 elsewhere). */
function rss(): { now: number; peak?: number } {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kb = (key: string) => Number(/\s(\d+) kB/.exec(status.split('\n').find((l) => l.startsWith(key)) ?? '')?.[1]);
    return { now: kb('VmRSS:') / 1024, peak: kb('VmHWM:') / 1024 };
  } catch {
    return { now: 0 };
  }
}

try {
  const agent = new Agent({ connect: { ca } });
  const demo = started.lenders.find((l) => l.lender === 'demo')!;
  const login = await request(`${started.authUrl}/admin/auth/demo/login`, {
    method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: demo.email, password: demo.password }),
  });
  const { token } = (await login.body.json()) as { token: string };
  if (login.statusCode !== 200) throw new Error(`login answered ${login.statusCode}`);
  const baseline = rss().now;

  let peakSampled = baseline;
  const sampler = setInterval(() => (peakSampled = Math.max(peakSampled, rss().now)), 50);

  // ---- the flood, from processes of its own so that encrypting it does not slow this client
  const floodProcesses = Math.min(FLOOD_PROCESSES, uploads);
  const floods = Array.from({ length: floodProcesses }, (_, i) => {
    const share = Math.floor(uploads / floodProcesses) + (i < uploads % floodProcesses ? 1 : 0);
    const job: FloodJob = { host: url.hostname, port: Number(url.port), ca, uploads: share, uploadBytes, seconds };
    let markRunning!: () => void;
    const running = new Promise<void>((resolve) => (markRunning = resolve));
    const result = new Promise<FloodResult>((resolve, reject) => {
      const proc = spawn(process.execPath, ['--import', 'tsx', SELF, FLOOD_FLAG, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      proc.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.startsWith('started\n')) markRunning();
      });
      proc.once('error', reject);
      proc.once('exit', (code) => {
        if (code === 0) resolve(JSON.parse(out.slice('started\n'.length)) as FloodResult);
        else reject(new Error(`flood process exited ${code}`));
      });
    });
    return { running, result };
  });
  // The ordinary client's clock starts with the flood.
  await Promise.all(floods.map((f) => f.running));
  const deadline = performance.now() + seconds * 1000;

  // ---- the ordinary client, throughout
  const latencies: number[] = [];
  const refused: string[] = [];
  const batch = JSON.stringify({
    accounts: Array.from({ length: 10 }, (_, i) => ({
      status: 1, debtorCompanyId: `FLOOD-C-${i}`, accountId: `FLOOD-A-${i}`, subAccountId: 'S-1',
      firstName: 'Aisha', lastName: 'Rahman', language: 'en', principal: '100',
    })),
  });
  const ordinary = (async () => {
    for (let i = 0; performance.now() < deadline; i++) {
      const push = i % 5 === 4;
      const path = `/admin/v3/lenders/${demo.lenderPublicId}/${push ? 'accounts' : 'exports/catalog'}`;
      const t0 = performance.now();
      try {
        const res = await request(`${started.authUrl}${path}`, {
          method: push ? 'POST' : 'GET', dispatcher: agent,
          headers: { authorization: `Bearer ${token}`, ...(push && { 'content-type': 'application/json' }) },
          ...(push && { body: batch }),
        });
        await res.body.text();
        if (res.statusCode !== 200) refused.push(`${push ? 'POST' : 'GET'} ${res.statusCode}`);
      } catch (error) {
        refused.push(`${push ? 'POST' : 'GET'} ${(error as { code?: string }).code ?? String(error)}`);
      }
      latencies.push(performance.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();

  const [results] = await Promise.all([Promise.all(floods.map((f) => f.result)), ordinary]);
  const answers: Record<string, number> = {};
  for (const r of results) for (const [status, n] of Object.entries(r.answers)) answers[status] = (answers[status] ?? 0) + n;
  const floodErrors = results.reduce((sum, r) => sum + r.errors, 0);
  clearInterval(sampler);
  const end = rss();
  const statsRes = await request(`${started.authUrl}/__sandbox/stats`, { dispatcher: agent });
  const stats = (await statsRes.body.json()) as Record<string, number>;
  await agent.close();

  const floodRequests = Object.values(answers).reduce((a, b) => a + b, 0);
  console.log(JSON.stringify({
    bench: 'sandbox-flood',
    uploads,
    uploadMB: uploadBytes / 1024 / 1024,
    seconds,
    floodAnswered: floodRequests,
    floodAnswers: answers,
    floodErrors,
    baselineRssMB: Math.round(baseline),
    peakRssMB: Math.round(Math.max(peakSampled, end.peak ?? 0)),
    sandboxBufferedBytesPeak: stats.bufferedBytesPeak,
    normalRequests: latencies.length,
    normalRefused: refused.length,
    normalRefusedKinds: [...new Set(refused)],
    normalWorstLatencyMs: Math.round(Math.max(...latencies)),
    normalMedianLatencyMs: Number(median(latencies).toFixed(1)),
    node: process.version,
  }));
} finally {
  child.kill('SIGTERM');
}
