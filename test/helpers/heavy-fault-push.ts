// Consecutive default `lender push` runs (no retry flags at all) into a `lender sandbox` child
// failing a third of the requests: the delivery deadline, not a count of attempts, must get every
// record through. Shared by chaos-push.test.ts (a few runs) and scripts/push-heavy-faults.ts (the
// 20-run figure of docs/resilience.md).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generatePushInput } from './push-input.ts';
import { runLender, type RunResult, type SandboxChild } from './resilience.ts';

export const HEAVY_FAULTS = '500=0.2,503=0.1,reset=0.05';

export interface PushRunReport {
  run: number;
  code: number | null;
  timedOut: boolean;
  received: number;
  accepted: number;
  rejected: number;
  failed: number;
  retries: number;
  /** The sandbox's accountsProcessed delta after a drain: what it really applied. */
  processed: number;
  faults: number;
  ms: number;
  /** The first lines of stderr when the run did not end with every record accepted. */
  problem?: string;
}

interface Summary {
  received: number;
  accepted: number;
  rejected: number;
  rejectedByReason: Record<string, number>;
  retries: number;
}

function summaryOf(run: RunResult): Summary | undefined {
  try {
    return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as Summary;
  } catch {
    return undefined;
  }
}

/** `records` valid records (creates, later updates and withdrawals), new ids every run. */
export async function pushRun(sandbox: SandboxChild, dir: string, run: number, records: number): Promise<PushRunReport> {
  const input = generatePushInput(records, 9000 + run, `HF${run}`, 0);
  const file = join(dir, `heavy-${run}.ndjson`);
  await writeFile(file, input.text);
  const before = await sandbox.stats();
  const result = await runLender(['push', file], { env: sandbox.env('demo'), timeoutMs: 600_000 });
  await sandbox.request('POST', '/__sandbox/drain');
  const after = await sandbox.stats();
  const s = summaryOf(result);
  const report: PushRunReport = {
    run,
    code: result.code,
    timedOut: result.timedOut,
    received: s?.received ?? 0,
    accepted: s?.accepted ?? 0,
    rejected: s?.rejected ?? 0,
    failed: s?.rejectedByReason.failed ?? 0,
    retries: s?.retries ?? 0,
    processed: after.accountsProcessed! - before.accountsProcessed!,
    faults: after.faultsInjected! - before.faultsInjected!,
    ms: result.ms,
  };
  if (!allAccepted(report, records)) report.problem = result.stderr.split('\n').slice(0, 5).join('\n');
  return report;
}

export function allAccepted(r: PushRunReport, records: number): boolean {
  return r.code === 0 && !r.timedOut && r.received === records && r.accepted === records && r.rejected === 0 && r.processed === records;
}
