// `lender demo` as a user runs it: a child process on an embedded sandbox, into a temporary
// --out folder. The summary on stdout must agree with what is on disk, and a second run into the
// same folder must be an incremental sync.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { runProcess, type ProcessResult } from '../helpers/run-process.ts';

const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const RECORDS = 400;

function runDemo(out: string): Promise<ProcessResult> {
  // No LENDER_* variables: the demo must need no credentials at all.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LENDER_')));
  return runProcess(process.execPath, ['--import', 'tsx', MAIN, 'demo', '--out', out, '--records', String(RECORDS)], { env });
}

interface Row {
  code: string;
  mode: string;
  fetched: number;
  inFile: number;
}

function datasetRows(stdout: string): Row[] {
  const rows: Row[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^ {2}(D\d\d) +.+? +(initial|incremental|resumed) +(\d+) +(\d+) +\d+$/.exec(line);
    if (m) rows.push({ code: m[1]!, mode: m[2]!, fetched: Number(m[3]), inFile: Number(m[4]) });
  }
  return rows;
}

function pushLine(stdout: string): { records: number; accepted: number; rejected: number } {
  const m = /^Pushed (\d+) account records: (\d+) accepted, (\d+) rejected/m.exec(stdout);
  assert.ok(m, `no push line in:\n${stdout}`);
  return { records: Number(m[1]), accepted: Number(m[2]), rejected: Number(m[3]) };
}

function reasonCounts(stdout: string): number[] {
  const start = stdout.indexOf('Rejected records by reason');
  assert.ok(start >= 0, 'the summary lists rejected records by reason');
  const counts: number[] = [];
  for (const line of stdout.slice(start).split('\n').slice(1)) {
    const m = /^ +(\d+) {2}\S/.exec(line);
    if (!m) break;
    counts.push(Number(m[1]));
  }
  return counts;
}

async function lineCount(path: string): Promise<number> {
  const text = await readFile(path, 'utf8');
  assert.ok(text === '' || text.endsWith('\n'), `${path} ends with a complete line`);
  return text === '' ? 0 : text.split('\n').length - 1;
}

async function datasetFiles(out: string): Promise<string[]> {
  return (await readdir(out)).filter((name) => /^D\d\d\.ndjson$/.test(name)).sort();
}

describe('lender demo', { timeout: 240_000 }, () => {
  let out: string;
  let first: ProcessResult;
  let second: ProcessResult;

  before(async () => {
    out = await mkdtemp(join(tmpdir(), 'lender-demo-'));
    first = await runDemo(out);
  });
  after(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('exits 0 with an initial sync whose rows per dataset equal the lines of out/*.ndjson', async () => {
    assert.equal(first.code, 0, first.stderr);
    const rows = datasetRows(first.stdout);
    assert.ok(rows.length >= 10, `expected a row per available dataset, got:\n${first.stdout}`);
    assert.deepEqual(rows.map((r) => `${r.code}.ndjson`).sort(), await datasetFiles(out));
    for (const r of rows) {
      assert.equal(r.mode, 'initial', r.code);
      const lines = await lineCount(join(out, `${r.code}.ndjson`));
      assert.equal(r.fetched, lines, `${r.code}: summary says ${r.fetched} rows, the file has ${lines} lines`);
      assert.equal(r.inFile, lines, r.code);
    }
    assert.ok(rows.some((r) => r.code === 'D03' && r.fetched > 0), 'the pushed portfolio is in D03');
    assert.match(first.stdout, /^Time: \d+\.\d s/m);
    assert.match(first.stdout, /lender repl --sandbox/);
  });

  it('reports every rejected record once, in the rejects file and grouped by reason', async () => {
    const push = pushLine(first.stdout);
    assert.equal(push.records, RECORDS);
    assert.equal(push.accepted + push.rejected, push.records);
    assert.ok(push.rejected > 0, 'the sample portfolio has deliberately invalid records');
    const rejects = (await readFile(join(out, 'rejects.ndjson'), 'utf8')).split('\n').filter((l) => l !== '');
    assert.equal(rejects.length, push.rejected);
    for (const line of rejects) {
      const entry = JSON.parse(line) as { errors: unknown };
      assert.ok(Array.isArray(entry.errors) && entry.errors.length > 0, line);
    }
    assert.equal(reasonCounts(first.stdout).reduce((a, b) => a + b, 0), push.rejected);
    assert.match(first.stdout, /principal must be a valid number/);
    assert.match(first.stdout, /2 of 2 flags accepted/);
  });

  it('draws a progress bar per dataset on stderr, never on stdout', () => {
    for (const r of datasetRows(first.stdout)) {
      assert.match(first.stderr, new RegExp(`^${r.code} +\\[#+\\] 100% ${r.fetched} rows`, 'm'));
    }
    assert.doesNotMatch(first.stdout, /\[#+/);
  });

  it('a second run is an incremental sync: fewer rows fetched, files appended, counts still agree', async () => {
    const before = new Map(datasetRows(first.stdout).map((r) => [r.code, r]));
    second = await runDemo(out);
    assert.equal(second.code, 0, second.stderr);
    const rows = datasetRows(second.stdout);
    assert.equal(rows.length, before.size);
    assert.match(second.stdout, /^Incremental sync of \d+ datasets/m);
    let fetchedBefore = 0;
    let fetchedNow = 0;
    for (const r of rows) {
      const prior = before.get(r.code);
      assert.ok(prior, r.code);
      assert.equal(r.mode, 'incremental', r.code);
      const lines = await lineCount(join(out, `${r.code}.ndjson`));
      assert.equal(r.inFile, lines, r.code);
      assert.equal(lines, prior.fetched + r.fetched, `${r.code}: the second run appends exactly what it fetched`);
      fetchedBefore += prior.fetched;
      fetchedNow += r.fetched;
    }
    assert.ok(fetchedNow < fetchedBefore, `incremental fetched ${fetchedNow}, initial ${fetchedBefore}`);
    // The re-pushed portfolio carries fresh timestamps, so the incremental load finds it.
    assert.ok(rows.some((r) => r.code === 'D03' && r.fetched > 0), 'the re-pushed sub-accounts are fetched again');
    const push = pushLine(second.stdout);
    const rejects = (await readFile(join(out, 'rejects.ndjson'), 'utf8')).split('\n').filter((l) => l !== '');
    assert.equal(rejects.length, push.rejected, 'the rejects file holds this run\'s rejects only');
  });
});
