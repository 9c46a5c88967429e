// exportRows -> NDJSON against a plain undici page loop on the same sandbox, side by side, with
// and without server latency. Prints one JSON line.
// Run: node --import tsx bench/export-throughput.ts [scale]
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { exportRows } from '../src/exports/export-stream.ts';
import { toNdjson } from '../src/exports/ndjson.ts';
import { countingSink, serveSandbox, type ServedSandbox } from './export-common.ts';

const scale = Number(process.argv[2] ?? 200_000);
const DATASET = 'D07';

async function plainLoop(s: ServedSandbox): Promise<{ rows: number; ms: number }> {
  const agent = new Agent({ connect: { ca: s.ca } });
  const login = await request(`${s.authUrl}/admin/auth/demo/login`, {
    method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: s.email, password: s.password }),
  });
  const session = (await login.body.json()) as { token: string; lenderPublicId: string };
  const sink = countingSink();
  const t0 = performance.now();
  let rows = 0;
  let cursor: string | null = null;
  do {
    const qs: URLSearchParams = new URLSearchParams({ limit: '1000', ...(cursor !== null && { cursor }) });
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
  await agent.close();
  return { rows, ms };
}

async function streamed(s: ServedSandbox, prefetch: number): Promise<{ rows: number; ms: number }> {
  const client = await s.login();
  const t0 = performance.now();
  const rows = exportRows(client, DATASET, { limit: 1000, prefetch });
  await pipeline(rows, toNdjson(), countingSink());
  const ms = performance.now() - t0;
  await client.close();
  return { rows: rows.stats.rows, ms };
}

const rate = (r: { rows: number; ms: number }) => Math.round((r.rows * 1000) / r.ms);
const result: Record<string, unknown> = { bench: 'export-throughput', dataset: DATASET, scale, node: process.version };
for (const latency of [0, 20]) {
  const s = await serveSandbox(['--scale', String(scale), '--latency', String(latency)]);
  try {
    await plainLoop(s); // warm-up: builds the table and JIT-compiles both paths
    await streamed(s, 1);
    // Alternating runs, median of each, so drift in the machine's load hits both alike.
    const runs: Record<'plain' | 'stream' | 'stream4', { rows: number; ms: number }[]> = { plain: [], stream: [], stream4: [] };
    for (let i = 0; i < 3; i += 1) {
      runs.plain.push(await plainLoop(s));
      runs.stream.push(await streamed(s, 1));
      runs.stream4.push(await streamed(s, 4));
    }
    const median = (xs: { rows: number; ms: number }[]) => [...xs].sort((a, b) => a.ms - b.ms)[1]!;
    const plain = median(runs.plain);
    const stream = median(runs.stream);
    const stream4 = median(runs.stream4);
    result[`latency${latency}`] = {
      plainRowsPerSec: rate(plain), streamRowsPerSec: rate(stream), stream4RowsPerSec: rate(stream4),
      ratio: +(rate(stream) / rate(plain)).toFixed(2), ratioPrefetch4: +(rate(stream4) / rate(plain)).toFixed(2), rows: stream.rows,
    };
  } finally {
    await s.close();
  }
}
console.log(JSON.stringify(result));
