// A portfolio with creates, later updates/withdrawals and ~6% invalid records (eight client-side
// kinds, malformed lines, and bad emails only the service refuses) pushed by a `lender push` child
// into a `lender sandbox` child that injects 500/503/resets on 7% of requests. Afterwards the
// service holds exactly the valid input (D03 balances and statuses, accountsProcessed), every
// invalid line is in the rejects file with a reason, and the summary adds up.
//
// Then heavy faults (35% of requests failing): consecutive default `lender push` runs of 3,000
// records, each of which must get every record accepted. Five attempts per batch lost a whole
// batch about one run in seven; the delivery deadline must lose none. LENDER_SOAK=1 makes it 20
// runs (also `node --import tsx scripts/push-heavy-faults.ts`, the figure in docs/resilience.md).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HEAVY_FAULTS, allAccepted, pushRun, type PushRunReport } from '../helpers/heavy-fault-push.ts';
import { generatePushInput, type PushInput } from '../helpers/push-input.ts';
import { SOAK, SecretScan, runLender, startSandboxChild, type SandboxChild } from '../helpers/resilience.ts';

const RECORDS = SOAK ? 200_000 : 50_000;
const HEAVY_RUNS = SOAK ? 20 : 5;
const HEAVY_RECORDS = 3000;

interface Summary {
  received: number;
  accepted: number;
  rejected: number;
  rejectedByReason: Record<string, number>;
}

/** The summary object on stdout: the last JSON line, the writer's counts at top level or under `summary`. */
function parseSummary(stdout: string): Summary {
  const last = stdout.trim().split('\n').at(-1) ?? '';
  const parsed = JSON.parse(last) as Summary & { summary?: Summary };
  return typeof parsed.received === 'number' ? parsed : parsed.summary!;
}

describe(`chaos push: ${RECORDS} records with invalid ones through lender push under faults`, () => {
  let sandbox: SandboxChild;
  let dir: string;
  let input: PushInput;
  const scan = new SecretScan();

  before(async () => {
    // A budget above the push: its sub-accounts are all stamped within minutes, one hour of D03
    // that `lender export` (which splits no window below an hour) could not read under the default.
    sandbox = await startSandboxChild(['--seed', '5', '--scale', '20', '--latency', '2', '--token-ttl', '3', '--faults', '500=0.03,503=0.02,reset=0.02', '--via-budget', '1000000']);
    dir = await mkdtemp(join(tmpdir(), 'lender-chaos-push-'));
    for (const l of sandbox.info.lenders) scan.secret(l.password);
    input = generatePushInput(RECORDS, 2024);
  });

  after(async () => {
    await sandbox?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('the service holds exactly the valid records; every invalid one is rejected with a reason', async (ctx) => {
    const file = join(dir, 'portfolio.ndjson');
    const rejectsFile = join(dir, 'rejects.ndjson');
    await writeFile(file, input.text);
    const before = await sandbox.stats();

    // Default retries (until each batch's delivery deadline): at these fault rates a record
    // rejected as 'failed' points at a real problem, and its message says which.
    const run = await runLender(['push', file, '--rejects', rejectsFile, '--batch-size', '250'], { env: sandbox.env('demo'), timeoutMs: 240_000 });
    scan.captureRun('push', run);
    assert.equal(run.timedOut, false, 'push finished');
    assert.equal(run.code, 3, `exit 3 (some records rejected): ${run.stderr.slice(0, 500)}`);

    // The summary adds up.
    const summary = parseSummary(run.stdout);
    if ((summary.rejectedByReason.failed ?? 0) > 0) {
      const failed = readFileSync(rejectsFile, 'utf8').split('\n').filter((l) => l.includes('"reason":"failed"'));
      assert.fail(`${failed.length} records failed after their retries; first: ${failed[0]?.slice(0, 400)}`);
    }
    assert.equal(summary.received, input.lines);
    assert.equal(summary.accepted, input.validCount);
    assert.equal(summary.rejected, input.invalid.size);
    assert.equal(Object.values(summary.rejectedByReason).reduce((a, b) => a + b, 0), summary.rejected);
    const serverSide = [...input.invalid.values()].filter((k) => k === 'server-bad-email').length;
    const malformed = [...input.invalid.values()].filter((k) => k === 'malformed-json').length;
    assert.equal(summary.rejectedByReason.failed ?? 0, 0, 'no batch ran out of retries');

    // Every invalid line, and nothing else, is in the rejects file with a reason and a message.
    const rejectsText = readFileSync(rejectsFile, 'utf8');
    scan.capture('rejects file', rejectsText);
    const rejects = rejectsText.trim().split('\n').map((l) => JSON.parse(l) as { line: number; reason: string; errors: string[] });
    assert.deepEqual(rejects.map((r) => r.line).sort((a, b) => a - b), [...input.invalid.keys()].sort((a, b) => a - b));
    const byReason: Record<string, number> = {};
    for (const r of rejects) {
      const kind = input.invalid.get(r.line)!;
      // Valid JSON that is not an object may be called malformed (not a record) or invalid.
      const allowed = kind === 'server-bad-email' ? ['server'] : kind === 'malformed-json' ? ['malformed']
        : kind === 'not-an-object' ? ['malformed', 'invalid'] : ['invalid'];
      assert.ok(allowed.includes(r.reason), `line ${r.line} (${kind}): reason ${r.reason}`);
      assert.ok(r.errors.length > 0 && r.errors.every((e) => typeof e === 'string' && e.length > 5), `line ${r.line}: a message`);
      byReason[r.reason] = (byReason[r.reason] ?? 0) + 1;
    }
    assert.deepEqual(summary.rejectedByReason, byReason, 'the summary counts the rejects file by reason');

    // After drain: processed count and the D03 rows equal the valid input exactly.
    const drained = await sandbox.request('POST', '/__sandbox/drain');
    assert.equal(drained.status, 200);
    const after = await sandbox.stats();
    assert.equal(after.accountsProcessed - before.accountsProcessed, input.validCount, 'accountsProcessed equals the valid count');
    await sandbox.request('POST', '/__sandbox/faults', { body: { faults: {}, latencyMs: 0 } });
    const exported = await runLender(['export', 'D03'], { env: sandbox.env('demo'), timeoutMs: 120_000 });
    scan.capture('export D03 stderr', exported.stderr);
    assert.equal(exported.code, 0, exported.stderr);
    const got = new Map<string, { accountId: string; balance: string; status: string }>();
    for (const line of exported.stdout.split('\n')) {
      if (line === '') continue;
      const row = JSON.parse(line) as Record<string, string>;
      if (!row.sub_account_id!.startsWith('RES-')) continue;
      assert.equal(got.has(row.sub_account_id!), false, `${row.sub_account_id} exported twice`);
      got.set(row.sub_account_id!, { accountId: row.account_id!, balance: row.balance!, status: row.status! });
    }
    const expected = Object.fromEntries([...input.expected].sort(([a], [b]) => (a < b ? -1 : 1)));
    const actual = Object.fromEntries([...got].sort(([a], [b]) => (a < b ? -1 : 1)));
    assert.deepEqual(actual, expected);
    ctx.diagnostic(`records=${input.lines} valid=${input.validCount} invalid=${input.invalid.size} (server-only ${serverSide}, malformed ${malformed}) subAccounts=${got.size} faultsInjected=${after.faultsInjected - before.faultsInjected} retries=${(summary as unknown as { retries?: number }).retries ?? '?'} lost=0 pushMs=${run.ms}`);
  });

  it('printed and wrote no password or token', () => {
    assert.ok(scan.count > 0);
    assert.deepEqual(scan.leaks(), []);
  });
});

describe(`chaos push under heavy faults: ${HEAVY_RUNS} default lender push runs of ${HEAVY_RECORDS} records, ${HEAVY_FAULTS}`, () => {
  let sandbox: SandboxChild;
  let dir: string;

  before(async () => {
    sandbox = await startSandboxChild(['--seed', '6', '--scale', '20', '--faults', HEAVY_FAULTS]);
    dir = await mkdtemp(join(tmpdir(), 'lender-heavy-faults-'));
  });

  after(async () => {
    await sandbox?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('every run accepts every record (none failed), and the sandbox applies each exactly once', async (ctx) => {
    const reports: PushRunReport[] = [];
    for (let run = 1; run <= HEAVY_RUNS; run++) {
      const report = await pushRun(sandbox, dir, run, HEAVY_RECORDS);
      reports.push(report);
      assert.ok(allAccepted(report, HEAVY_RECORDS), `run ${run} of ${HEAVY_RUNS}: ${JSON.stringify(report)}`);
    }
    const total = (key: 'faults' | 'retries') => reports.reduce((n, r) => n + r[key], 0);
    ctx.diagnostic(`runs=${reports.length} allAccepted=${reports.length} faultsInjected=${total('faults')} retries=${total('retries')} runMs=${reports.map((r) => r.ms).join(',')}`);
  });
});
