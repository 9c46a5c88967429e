// exportRows -> NDJSON against a plain undici page loop on the same sandbox, side by side, with
// and without server latency. Prints one JSON line.
// Run: node --import tsx bench/export-throughput.ts [scale] [rounds]
//
// Each round runs the three variants back to back, in an order that rotates from round to round,
// and the ratios are the medians of each round's own ratios: runs adjacent in time share the
// machine's load, so their ratio is the least disturbed by other work on a shared machine. Client
// CPU per row (process.cpuUsage, not inflated by that load) is reported alongside.
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { exportRows } from '../src/exports/export-stream.ts';
import { toNdjson } from '../src/exports/ndjson.ts';
import { DEFAULT_ORIGIN } from '../src/exports/windows.ts';
import { countingSink, serveSandbox, type ServedSandbox } from './export-common.ts';
import { median } from './stats.ts';

const scale = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const DATASET = 'D07';
const ORIGIN = DEFAULT_ORIGIN;

interface Run {
  rows: number;
  ms: number;
  /** Client-process CPU per row, µs. */
  cpu: number;
}

async function plainLoop(s: ServedSandbox, msPerMB: number): Promise<Run> {
  const agent = new Agent({ connect: { ca: s.ca } });
  const login = await request(`${s.authUrl}/admin/auth/demo/login`, {
    method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: s.email, password: s.password }),
  });
  const session = (await login.body.json()) as { token: string; lenderPublicId: string };
  const sink = countingSink(0, 0, msPerMB);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let rows = 0;
  let cursor: string | null = null;
  do {
    // The same query exportRows sends for a direct dataset (one window from its default origin,
    // ascending), so both sides ask the service for the same pages: the sandbox's answer to a
    // `since` query costs it measurably more than an unbounded one, which is the server's time,
    // not the client overhead this bench compares.
    const qs: URLSearchParams = new URLSearchParams({ since: ORIGIN, sort: 'asc', limit: '1000', ...(cursor !== null && { cursor }) });
    const res: Awaited<ReturnType<typeof request>> = await request(`${s.authUrl}/admin/v3/lenders/${session.lenderPublicId}/exports/S2/${DATASET}?${qs}`, {
      dispatcher: agent, headers: { authorization: `Bearer ${session.token}` },
    });
    const body: { rows: unknown[]; pagination: { nextCursor: string | null } } = ((await res.body.json()) as { body: { rows: unknown[]; pagination: { nextCursor: string | null } } }).body;
    let text = '';
    for (const row of body.rows) text += JSON.stringify(row) + '\n';
    if (!sink.write(text)) await new Promise((r) => sink.once('drain', r));
    rows += body.rows.length;
    cursor = body.pagination.nextCursor;
  } while (cursor !== null);
  const ms = performance.now() - t0;
  const cpu = cpuPerRow(cpu0, rows);
  await agent.close();
  return { rows, ms, cpu };
}

function cpuPerRow(since: NodeJS.CpuUsage, rows: number): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / rows;
}

async function streamed(s: ServedSandbox, prefetch: number, msPerMB: number): Promise<Run> {
  const client = await s.login();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const rows = exportRows(client, DATASET, { limit: 1000, prefetch });
  await pipeline(rows, toNdjson(), countingSink(0, 0, msPerMB));
  const ms = performance.now() - t0;
  const cpu = cpuPerRow(cpu0, rows.stats.rows);
  await client.close();
  return { rows: rows.stats.rows, ms, cpu };
}

const result: Record<string, unknown> = { bench: 'export-throughput', dataset: DATASET, scale, rounds: ROUNDS, node: process.version };
type Variant = 'plain' | 'stream' | 'stream4';
const VARIANTS: Variant[] = ['plain', 'stream', 'stream4'];
// A page of 1,000 D07 rows is about 0.3 MB of NDJSON, so 33 ms/MB is about 10 ms of consumer work
// per page: the case prefetch exists for, since it fetches the next page while the consumer works.
const SCENARIOS = [
  { key: 'latency0', latency: 0, msPerMB: 0 },
  { key: 'latency20', latency: 20, msPerMB: 0 },
  { key: 'latency20Consumer', latency: 20, msPerMB: 33 },
];
for (const { key, latency, msPerMB } of SCENARIOS) {
  const s = await serveSandbox(['--scale', String(scale), '--latency', String(latency)]);
  try {
    await plainLoop(s, msPerMB); // warm-up: builds the table and JIT-compiles both paths
    await streamed(s, 1, msPerMB);
    const runs: Record<Variant, Run[]> = { plain: [], stream: [], stream4: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let k = 0; k < VARIANTS.length; k += 1) {
        const variant = VARIANTS[(round + k) % VARIANTS.length]!;
        runs[variant].push(variant === 'plain' ? await plainLoop(s, msPerMB) : await streamed(s, variant === 'stream' ? 1 : 4, msPerMB));
      }
    }
    const rate = (variant: Variant) => Math.round(median(runs[variant].map((r) => (r.rows * 1000) / r.ms)));
    const ratio = (variant: Variant) => +median(runs[variant].map((r, i) => runs.plain[i]!.ms / r.ms)).toFixed(2);
    const cpu = (variant: Variant) => +median(runs[variant].map((r) => r.cpu)).toFixed(2);
    result[key] = {
      consumerMsPerMB: msPerMB,
      plainRowsPerSec: rate('plain'), streamRowsPerSec: rate('stream'), stream4RowsPerSec: rate('stream4'),
      ratio: ratio('stream'), ratioPrefetch4: ratio('stream4'), rows: runs.stream[0]!.rows,
      ratios: runs.stream.map((r, i) => +(runs.plain[i]!.ms / r.ms).toFixed(2)),
      clientCpuMicrosPerRow: { plain: cpu('plain'), stream: cpu('stream'), stream4: cpu('stream4') },
    };
  } finally {
    await s.close();
  }
}
console.log(JSON.stringify(result));
