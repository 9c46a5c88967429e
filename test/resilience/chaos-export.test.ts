// Chaos export: every available dataset read through sync() while the sandbox injects 500, 503,
// 504 and resets, adds latency, expires tokens every 2 s and (second scenario) writes rows during
// the walk. The oracle is an independent plain page loop over one bounded window per dataset,
// with faults off: no windows, no splits, no checkpoints, so a bug in those cannot hide itself.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LenderClient } from '../../src/client/client.ts';
import type { DatasetRef, ExportRow } from '../../src/core/types.ts';
import { fileState } from '../../src/exports/index.ts';
import { sync, type DatasetSyncSummary } from '../../src/sinks/index.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import {
  SOAK, SecretScan, canonicalLines, latestByKey, loginTokens, readSyncFolder, rowKey,
} from '../helpers/resilience.ts';
import { monthlyWalk } from '../helpers/plain-walk.ts';

const SCALE = SOAK ? 3000 : 300;
const FAULTS = { '500': 0.04, '503': 0.04, '504': 0.04, reset: 0.03 } as const;
// Enough attempts that a request failing every one of them (0.15^10) never happens in practice:
// the scenario is about the stream surviving faults, not about the retry budget running out.
const RETRY = { attempts: 10, baseDelayMs: 2, maxDelayMs: 40 };

interface Counters { retries: number; refreshes: number; splits: number; requests: number; pages: number }

async function login(t: TestSandbox): Promise<LenderClient> {
  return LenderClient.login({ ...t.sandbox.credentials('demo'), retry: RETRY });
}

async function availableCodes(client: LenderClient): Promise<string[]> {
  const catalog = await client.catalog();
  return catalog.sections.flatMap((s) => s.datasets.filter((d) => d.available).map((d) => d.code));
}

/** The oracle: one bounded window (so D03/D23 never 504), cursor walked to null, faults off. */
async function runSync(client: LenderClient, out: string, counters: Counters, concurrency = 1): Promise<Record<string, DatasetSyncSummary>> {
  const onRetry = () => void (counters.retries += 1);
  const onRefresh = () => void (counters.refreshes += 1);
  client.on('retry', onRetry);
  client.on('refresh', onRefresh);
  const before = client.stats.requests;
  try {
    const summary = await sync(client, undefined, { out, state: fileState(join(out, 'state.json')), concurrency });
    for (const s of Object.values(summary)) {
      counters.splits += s.splits;
      counters.pages += s.pages;
    }
    return summary;
  } finally {
    counters.requests += client.stats.requests - before;
    client.off('retry', onRetry);
    client.off('refresh', onRefresh);
  }
}

describe('chaos export: sync under 500/503/504/reset, latency, 2 s tokens and writes', () => {
  let t: TestSandbox;
  let dir: string;
  let codes: string[];
  const oracle: Record<string, ExportRow[]> = {};
  const scan = new SecretScan();

  before(async () => {
    t = await startTestSandbox({ seed: 9, scale: SCALE, viaBudget: 200, tokenTtlSeconds: 2 });
    dir = await mkdtemp(join(tmpdir(), 'lender-chaos-export-'));
    for (const l of t.sandbox.lenders) {
      scan.secret(l.password);
      const own = await loginTokens(t.agent, t.sandbox.authUrl, l.lender, l.email, l.password);
      scan.secret(own.token, own.refreshToken);
    }
    const clean = await login(t);
    try {
      codes = await availableCodes(clean);
      for (const code of codes) {
        // Month by month: at this budget even the widest bounded window of a via dataset is a 504.
        oracle[code] = await monthlyWalk(clean, code as DatasetRef);
        const keys = new Set(oracle[code]!.map((r) => rowKey(code, r)));
        assert.equal(keys.size, oracle[code]!.length, `${code}: row keys are unique in a clean walk`);
      }
    } finally {
      await clean.close();
    }
  });

  after(async () => {
    await t?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('reads every available dataset, each row exactly as a clean walk reads it', async (ctx) => {
    assert.ok(codes.length >= 15, `the catalog lists ${codes.length} available datasets`);
    const out = join(dir, 'faults');
    const counters: Counters = { retries: 0, refreshes: 0, splits: 0, requests: 0, pages: 0 };
    const faultsBefore = t.sandbox.stats().faultsInjected ?? 0;
    t.sandbox.setFaults({ latencyMs: 1, faults: { ...FAULTS } });
    const client = await login(t);
    // The walk may end within one token's life on a fast machine: the first token runs out
    // before it starts, so a renewal happens whatever the speed (and more on a slower walk).
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    let summary;
    try {
      summary = await runSync(client, out, counters, 2);
    } finally {
      t.sandbox.setFaults({ latencyMs: 0, faults: {} });
      await client.close();
    }
    const faults = (t.sandbox.stats().faultsInjected ?? 0) - faultsBefore;
    const files = readSyncFolder(out);
    assert.deepEqual(Object.keys(files).sort(), [...codes].sort());
    let rows = 0;
    let duplicates = 0;
    for (const code of codes) {
      const written = files[code]!;
      const unique = new Set(written.map((r) => JSON.stringify(r)));
      duplicates += written.length - unique.size;
      rows += unique.size;
      assert.deepEqual([...unique].sort(), canonicalLines(oracle[code]!), `${code}: rows differ from the clean walk`);
      assert.equal(summary[code]!.rows, written.length, `${code}: summary rows match the file`);
    }
    // A load that never crashed writes each row once: boundary re-reads are filtered by id.
    assert.equal(duplicates, 0, 'no row written twice');
    assert.ok(faults > 0 && counters.retries > 0 && counters.splits > 0 && counters.refreshes > 0,
      `every kind of trouble happened: ${JSON.stringify({ faults, ...counters })}`);
    scan.captureFolder('chaos sync output', out);
    ctx.diagnostic(`datasets=${codes.length} rows=${rows} requests=${counters.requests} faults=${faults} retries=${counters.retries} splits=${counters.splits} refreshes=${counters.refreshes} pages=${counters.pages} duplicates=${duplicates}`);
  });

  it('with rows written during the walk, skips none and converges to the latest version of every row', async (ctx) => {
    const out = join(dir, 'churn');
    const counters: Counters = { retries: 0, refreshes: 0, splits: 0, requests: 0, pages: 0 };
    t.sandbox.setFaults({ latencyMs: 1, faults: { ...FAULTS } });
    const churn = await t.request('POST', '/__sandbox/churn', { body: { rate: 300 } });
    assert.equal(churn.status, 200);
    // advance() on top of the churn: deterministic updates and inserts at the sandbox's now.
    let advanced = 0;
    let advances = 0;
    const timer = setInterval(() => {
      // A bounded number, so a slow machine does not turn the walk into a chase.
      if (++advances > 8) return;
      const r = t.sandbox.advance();
      advanced += r.updated + r.inserted;
    }, 300);
    const client = await login(t);
    let written = 0;
    try {
      await runSync(client, out, counters, 1);
    } finally {
      clearInterval(timer);
      written = ((await t.request('POST', '/__sandbox/churn', { body: { rate: 0 } })).body as { written: number }).written;
    }
    // No skip: every row that existed for the whole walk is in the initial load, in some version.
    const initial = readSyncFolder(out);
    for (const code of codes) {
      const got = new Set((initial[code] ?? []).map((r) => rowKey(code, r)));
      const missing = oracle[code]!.filter((r) => !got.has(rowKey(code, r)));
      assert.deepEqual(missing.map((r) => rowKey(code, r)), [], `${code}: rows present before the walk were skipped`);
    }
    // Writes have stopped: an incremental run (still under faults) brings every row up to date.
    try {
      await runSync(client, out, counters, 1);
    } finally {
      t.sandbox.setFaults({ latencyMs: 0, faults: {} });
      await client.close();
    }
    const clean = await login(t);
    const files = readSyncFolder(out);
    let rows = 0;
    try {
      for (const code of codes) {
        const now = await monthlyWalk(clean, code as DatasetRef);
        const got = files[code] ?? [];
        // Every row in its latest version: each line of the clean walk was written verbatim.
        const gotLines = new Set(got.map((r) => JSON.stringify(r)));
        const stale = now.filter((r) => !gotLines.has(JSON.stringify(r)));
        assert.deepEqual(stale.map((r) => rowKey(code, r)), [], `${code}: rows missing or not in their latest version`);
        // And nothing else: no row the service does not hold.
        const known = new Set(now.map((r) => rowKey(code, r)));
        assert.deepEqual(got.filter((r) => !known.has(rowKey(code, r))), [], `${code}: rows the service does not hold`);
        // Where rows are identifiable (all but D16 inserts sharing a case and a millisecond),
        // the newest version written is exactly the service's.
        const expected = latestByKey(code, now);
        if (expected.size === now.length) {
          assert.deepEqual(canonicalLines(latestByKey(code, got).values()), canonicalLines(expected.values()), `${code}: latest versions differ`);
        }
        rows += now.length;
      }
    } finally {
      await clean.close();
    }
    assert.ok(written + advanced > 0, 'rows were written during the walk');
    scan.captureFolder('churn sync output', out);
    ctx.diagnostic(`rows=${rows} churnWrites=${written} advanced=${advanced} requests=${counters.requests} retries=${counters.retries} splits=${counters.splits} refreshes=${counters.refreshes}`);
  });

  it('wrote no password or token into any output file', () => {
    assert.ok(scan.count > 0);
    assert.deepEqual(scan.leaks(), []);
  });
});
