// Soak: push + sync loops under faults for N minutes against a `lender sandbox` child (so the
// sandbox's own memory is not counted), then one JSON summary on stdout: throughput, faults
// survived, records lost, peak RSS and memory growth over time (heap after GC, sampled each
// iteration; a steady climb after warm-up is a leak).
//
//   node --import tsx scripts/soak.ts --minutes 60 [--records 5000] [--faults 500=0.03,...]
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createAccountWriter } from '../src/accounts/account-writer.ts';
import { readNdjson } from '../src/accounts/sources/ndjson.ts';
import { LenderClient } from '../src/client/client.ts';
import { fileState } from '../src/exports/index.ts';
import { sync } from '../src/sinks/index.ts';
import { generatePushInput } from '../test/helpers/push-input.ts';
import { startSandboxChild } from '../test/helpers/resilience.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '1' },
    records: { type: 'string', default: '5000' },
    scale: { type: 'string', default: '500' },
    faults: { type: 'string', default: '500=0.03,503=0.02,504=0.02,reset=0.02' },
  },
});
const minutes = Number(values.minutes);
const records = Number(values.records);
if (!(minutes > 0) || !(records > 0)) {
  process.stderr.write('usage: soak.ts --minutes N [--records N] [--scale N] [--faults LIST]\n');
  process.exit(2);
}

// A GC before each sample makes heap figures comparable; exposed at run time so the script needs
// no Node flag.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MB = 1024 * 1024;
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

interface Sample { t: number; iteration: number; rssMb: number; heapMb: number }

const sandbox = await startSandboxChild(['--seed', '77', '--scale', values.scale, '--latency', '1', '--token-ttl', '5', '--via-budget', '2000', '--faults', values.faults]);
const dir = await mkdtemp(join(tmpdir(), 'lender-soak-'));
const lender = sandbox.info.lenders[0]!;
const client = await LenderClient.login({
  authUrl: sandbox.info.authUrl, lender: lender.lender, email: lender.email, password: lender.password,
  ca: readFileSync(sandbox.info.caFile, 'utf8'), retry: { attempts: 10, baseDelayMs: 2, maxDelayMs: 50 },
});
let refreshes = 0;
client.on('refresh', () => void (refreshes += 1));

const started = Date.now();
const deadline = started + minutes * 60_000;
const samples: Sample[] = [];
let peakRss = 0;
const totals = { iterations: 0, pushed: 0, accepted: 0, rejected: 0, expectedAccepted: 0, expectedRejected: 0, synced: 0, pages: 0, splits: 0, pushMs: 0, syncMs: 0, errors: [] as string[] };
const rssTimer = setInterval(() => void (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250).unref();

const sample = (iteration: number) => {
  gc();
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  samples.push({ t: Math.round((Date.now() - started) / 1000), iteration, rssMb: round(m.rss / MB), heapMb: round(m.heapUsed / MB) });
};

sample(0);
const processedBefore = (await sandbox.stats()).accountsProcessed ?? 0;
try {
  for (let i = 1; Date.now() < deadline; i++) {
    // Same ids every iteration (upserts), so the sandbox's state stays bounded over an hour.
    const input = generatePushInput(records, i, 'SOAK');
    let t0 = Date.now();
    const writer = createAccountWriter(client, { batchSize: 250, concurrency: 2 });
    await pipeline(Readable.from(readNdjson(Readable.from([input.text]))), writer);
    totals.pushMs += Date.now() - t0;
    const s = writer.summary;
    totals.pushed += s.received;
    totals.accepted += s.accepted;
    totals.rejected += s.rejected;
    totals.expectedAccepted += input.validCount;
    totals.expectedRejected += input.invalid.size;
    if (s.accepted !== input.validCount) totals.errors.push(`iteration ${i}: accepted ${s.accepted} of ${input.validCount} valid`);

    await sandbox.request('POST', '/__sandbox/advance');
    t0 = Date.now();
    const result = await sync(client, undefined, { out: join(dir, 'out'), state: fileState(join(dir, 'state.json')) });
    totals.syncMs += Date.now() - t0;
    for (const d of Object.values(result)) {
      totals.synced += d.rows;
      totals.pages += d.pages;
      totals.splits += d.splits;
    }
    totals.iterations = i;
    sample(i);
  }
} catch (error) {
  totals.errors.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}
clearInterval(rssTimer);

await sandbox.request('POST', '/__sandbox/drain');
const stats = await sandbox.stats();
const processed = (stats.accountsProcessed ?? 0) - processedBefore;
await client.close();
await sandbox.stop();
await rm(dir, { recursive: true, force: true });

// Growth: least-squares slope of the post-GC heap over time, after the first third (warm-up).
const tail = samples.slice(Math.max(1, Math.floor(samples.length / 3)));
let slopeMbPerHour: number | null = null;
if (tail.length >= 3) {
  const n = tail.length;
  const mx = tail.reduce((a, s) => a + s.t, 0) / n;
  const my = tail.reduce((a, s) => a + s.heapMb, 0) / n;
  const num = tail.reduce((a, s) => a + (s.t - mx) * (s.heapMb - my), 0);
  const den = tail.reduce((a, s) => a + (s.t - mx) ** 2, 0);
  slopeMbPerHour = den === 0 ? 0 : round((num / den) * 3600, 2);
}
const elapsedS = (Date.now() - started) / 1000;
// Keep at most ~60 samples in the report: one per minute on long runs.
const step = Math.max(1, Math.ceil(samples.length / 60));
const summary = {
  minutes: round(elapsedS / 60, 2),
  iterations: totals.iterations,
  push: {
    records: totals.pushed, accepted: totals.accepted, rejected: totals.rejected,
    recordsPerSecond: totals.pushMs > 0 ? Math.round((totals.pushed * 1000) / totals.pushMs) : 0,
    processedBySandbox: processed,
    lost: totals.expectedAccepted - processed,
  },
  sync: { rows: totals.synced, pages: totals.pages, splits: totals.splits, rowsPerSecond: totals.syncMs > 0 ? Math.round((totals.synced * 1000) / totals.syncMs) : 0 },
  client: { ...client.stats, refreshes },
  sandbox: { requests: stats.requests, faultsInjected: stats.faultsInjected, refreshes: stats.refreshes, logins: stats.logins },
  memory: {
    peakRssMb: round(peakRss / MB),
    startHeapMb: samples[0]?.heapMb, endHeapMb: samples.at(-1)?.heapMb,
    startRssMb: samples[0]?.rssMb, endRssMb: samples.at(-1)?.rssMb,
    heapGrowthMbPerHour: slopeMbPerHour,
    // [seconds, iteration, rss MB, heap MB after GC]
    samples: samples.filter((_, i) => i % step === 0 || i === samples.length - 1).map((x) => [x.t, x.iteration, x.rssMb, x.heapMb]),
  },
  errors: totals.errors,
  ok: totals.errors.length === 0 && processed === totals.expectedAccepted && totals.rejected === totals.expectedRejected,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
process.exitCode = summary.ok ? 0 : 1;
