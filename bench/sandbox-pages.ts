// Keyset pagination at scale: with 1,000,000 rows in D07, a page near the end should cost about
// what the first page costs, because a page is a seek plus a 1000-row scan, never an offset.
// Measured side by side in one run over real HTTPS; prints one JSON line.
//
//   node --import tsx bench/sandbox-pages.ts [--scale 1000000] [--samples 30] [--walk-pages 200]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { DATA_SPAN } from '../src/sandbox/contracts.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { median } from './stats.ts';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1000000' },
    samples: { type: 'string', default: '30' },
    'walk-pages': { type: 'string', default: '200' },
  },
});
const scale = Number(values.scale);
const samples = Number(values.samples);
const walkPages = Number(values['walk-pages']);

const mb = (bytes: number): number => Math.round(bytes / 1024 / 1024);
const round = (x: number, places = 2): number => Number(x.toFixed(places));

const rssBefore = process.memoryUsage().rss;
const startedAt = performance.now();
const sandbox = await startSandbox({ scale });
const startMs = performance.now() - startedAt;
const rssStarted = process.memoryUsage().rss;

const agent = new Agent({ connect: { ca: sandbox.ca } });
const { email, password, lender } = sandbox.credentials('demo');
const login = await request(`${sandbox.authUrl}/admin/auth/${lender}/login`, {
  method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }),
});
const session = (await login.body.json()) as { token: string; lenderPublicId: string };
const base = `${sandbox.baseUrl}/lenders/${session.lenderPublicId}/exports/S2/D07`;

interface Page {
  rows: unknown[];
  pagination: { nextCursor: string | null; returned: number };
}

async function fetchPage(query: string): Promise<{ page: Page; ms: number; bytes: number }> {
  const t0 = performance.now();
  const res = await request(`${base}?${query}`, { dispatcher: agent, headers: { authorization: `Bearer ${session.token}` } });
  const text = await res.body.text();
  const ms = performance.now() - t0;
  if (res.statusCode !== 200) throw new Error(`${query}: ${res.statusCode} ${text}`);
  return { page: (JSON.parse(text) as { body: Page }).body, ms, bytes: text.length };
}

// Building the 1M-row table happens on the first read; time it apart from the page latencies.
const buildStart = performance.now();
await fetchPage('limit=1');
const buildMs = performance.now() - buildStart;
const rssBuilt = process.memoryUsage().rss;

// A genuine deep cursor: the continuation of a page that starts close enough to the end of the
// data to hold about 3,000 rows (two days at 1M rows; proportionally longer at smaller scales).
const spanMs = Date.parse(DATA_SPAN.end) - Date.parse(DATA_SPAN.start);
const nearEnd = new Date(Date.parse(DATA_SPAN.end) - Math.min(spanMs / 2, (spanMs * 3000) / scale)).toISOString();
const deepCursor = (await fetchPage(`limit=1000&since=${nearEnd}`)).page.pagination.nextCursor;
if (deepCursor === null) throw new Error('no rows near the end of D07');

const first: number[] = [];
const deep: number[] = [];
for (let i = 0; i < samples; i++) {
  // Interleaved, so drift in machine load hits both equally.
  first.push((await fetchPage('limit=1000')).ms);
  deep.push((await fetchPage(`limit=1000&cursor=${deepCursor}`)).ms);
}

let cursor: string | null = null;
let rows = 0;
let bytes = 0;
const walkStart = performance.now();
for (let i = 0; i < walkPages; i++) {
  const { page, bytes: n } = await fetchPage(`limit=1000${cursor === null ? '' : `&cursor=${cursor}`}`);
  rows += page.pagination.returned;
  bytes += n;
  cursor = page.pagination.nextCursor;
  if (cursor === null) break;
}
const walkMs = performance.now() - walkStart;

console.log(JSON.stringify({
  bench: 'sandbox-pages',
  node: process.version,
  scale,
  dataset: 'D07',
  startMs: Math.round(startMs),
  buildD07Ms: Math.round(buildMs),
  firstPageMedianMs: round(median(first)),
  deepPageMedianMs: round(median(deep)),
  deepToFirstRatio: round(median(deep) / median(first)),
  walkRows: rows,
  rowsPerSecond: Math.round(rows / (walkMs / 1000)),
  mbPerSecond: round(bytes / 1024 / 1024 / (walkMs / 1000), 1),
  rssMb: { beforeStart: mb(rssBefore), afterStart: mb(rssStarted), afterD07Built: mb(rssBuilt), afterWalk: mb(process.memoryUsage().rss) },
}));

await agent.close();
await sandbox.close();
