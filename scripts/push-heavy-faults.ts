// Consecutive default `lender push` runs of N records each into a `lender sandbox` child injecting
// 20% 500 + 10% 503 + 5% connection resets: how many runs ended with every record accepted (and
// applied exactly once by the sandbox). One JSON line per run on stderr, a summary on stdout.
//
//   node --import tsx scripts/push-heavy-faults.ts [--runs 20] [--records 3000] [--faults LIST]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HEAVY_FAULTS, allAccepted, pushRun, type PushRunReport } from '../test/helpers/heavy-fault-push.ts';
import { startSandboxChild } from '../test/helpers/resilience.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    records: { type: 'string', default: '3000' },
    faults: { type: 'string', default: HEAVY_FAULTS },
  },
});
const runs = Number(values.runs);
const records = Number(values.records);
if (!(runs > 0) || !(records > 0)) {
  process.stderr.write('usage: push-heavy-faults.ts [--runs N] [--records N] [--faults LIST]\n');
  process.exit(2);
}

const sandbox = await startSandboxChild(['--seed', '5', '--scale', '20', '--faults', values.faults]);
const dir = await mkdtemp(join(tmpdir(), 'lender-heavy-faults-'));
const reports: PushRunReport[] = [];
const started = Date.now();
try {
  for (let run = 1; run <= runs; run++) {
    const report = await pushRun(sandbox, dir, run, records);
    reports.push(report);
    process.stderr.write(`${JSON.stringify(report)}\n`);
  }
} finally {
  await sandbox.stop();
  await rm(dir, { recursive: true, force: true });
}
const ok = reports.filter((r) => allAccepted(r, records)).length;
const ms = reports.map((r) => r.ms).sort((a, b) => a - b);
const summary = {
  faults: values.faults,
  records,
  runs,
  allAccepted: ok,
  failedRecords: reports.reduce((n, r) => n + r.failed, 0),
  faultsInjected: reports.reduce((n, r) => n + r.faults, 0),
  retries: reports.reduce((n, r) => n + r.retries, 0),
  runMs: { median: ms[Math.floor(ms.length / 2)], max: ms.at(-1) },
  totalSeconds: Math.round((Date.now() - started) / 100) / 10,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
process.exitCode = ok === runs ? 0 : 1;
