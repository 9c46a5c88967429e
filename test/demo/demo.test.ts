// `lender demo` as a user runs it: a child process on an embedded sandbox, into a temporary
// --out folder. The summary on stdout must agree with what is in the DuckDB file, the SQL it shows
// must give the answer it prints, and a second run into the same folder must be an incremental
// sync that keeps each row once.
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { runProcess, type ProcessResult } from '../helpers/run-process.ts';
import { duckdbSink } from '../../src/sinks/duckdb-sink.ts';

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
  inTable: number;
}

function datasetRows(stdout: string): Row[] {
  const rows: Row[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^ {2}(D\d\d) +.+? +(initial|incremental|resumed) +(\d+) +(\d+) +\d+$/.exec(line);
    if (m) rows.push({ code: m[1]!, mode: m[2]!, fetched: Number(m[3]), inTable: Number(m[4]) });
  }
  return rows;
}

/** The payments table as printed, and the SQL printed under it. */
function paymentsBlock(stdout: string): { rows: string[][]; sql: string } {
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => l.startsWith('Payments by month and status'));
  assert.ok(start >= 0, `no payments table in:\n${stdout}`);
  const query = lines.findIndex((l, i) => i > start && l.startsWith('The query, to run on '));
  assert.ok(query > start + 1, 'the SQL follows the table');
  assert.match(lines[start + 1]!, /^ {2}month +status +payments +amount$/);
  const rows = lines.slice(start + 2, query).map((l) => l.trim().split(/ +/));
  const end = lines.findIndex((l, i) => i > query && l === '');
  return { rows, sql: lines.slice(query + 1, end).map((l) => l.slice(2)).join('\n') };
}

/** Runs SQL on the demo's database file (the demo has ended, so the file is free). */
async function query(database: string, sql: string): Promise<Record<string, unknown>[]> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(database, { access_mode: 'READ_ONLY' });
  try {
    const conn = await instance.connect();
    try {
      return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

/** Rows and distinct identities of each dataset's table. */
async function tableCounts(database: string, codes: readonly string[]): Promise<Map<string, { rows: number; keys: number }>> {
  const counts = new Map<string, { rows: number; keys: number }>();
  for (const code of codes) {
    const key = code === 'D16' ? '_row_key' : 'public_id';
    const [r] = await query(database, `SELECT count(*) AS rows, count(DISTINCT ${key}) AS keys FROM ${code.toLowerCase()}`);
    counts.set(code, { rows: Number(r!.rows), keys: Number(r!.keys) });
  }
  return counts;
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

  it('exits 0 with an initial sync whose rows per dataset are the rows of its table in out/lender.duckdb', async () => {
    assert.equal(first.code, 0, first.stderr);
    const rows = datasetRows(first.stdout);
    assert.ok(rows.length >= 10, `expected a row per available dataset, got:\n${first.stdout}`);
    const database = join(out, 'lender.duckdb');
    const tables = await query(database, `SELECT table_name AS t FROM duckdb_tables() WHERE table_name LIKE 'd%' ORDER BY 1`);
    assert.deepEqual(tables.map((t) => t.t), rows.map((r) => r.code.toLowerCase()).sort());
    const counts = await tableCounts(database, rows.map((r) => r.code));
    for (const r of rows) {
      assert.equal(r.mode, 'initial', r.code);
      const stored = counts.get(r.code)!;
      assert.equal(r.inTable, stored.rows, `${r.code}: summary says ${r.inTable} rows, the table has ${stored.rows}`);
      assert.equal(r.fetched, stored.rows, `${r.code}: every row fetched is in the table once`);
      assert.equal(stored.keys, stored.rows, `${r.code}: one row per identity`);
    }
    const states = await query(database, 'SELECT key FROM _lender_state ORDER BY key');
    assert.deepEqual(states.map((s) => s.key), rows.map((r) => r.code).sort(), 'the state of each dataset is in the database');
    assert.ok(rows.some((r) => r.code === 'D03' && r.fetched > 0), 'the pushed portfolio is in D03');
    assert.equal(statSync(database).mode & 0o777, 0o600, 'the database holds personal data: owner only');
    assert.ok(!existsSync(`${database}.wal`), 'closed cleanly: everything is in the file');
    assert.match(first.stdout, /^Time: \d+\.\d s/m);
    assert.match(first.stdout, /lender repl --sandbox/);
    // Run again into the same folder, which is not ./out: the hint names it.
    assert.ok(first.stdout.includes(`npx lender demo --out ${out} `), first.stdout);
    const [, batches, batchWord, retries, retryWord] = /\((\d+) (batch|batches), (\d+) (retry|retries)\)/.exec(first.stdout) ?? [];
    assert.equal(batchWord, batches === '1' ? 'batch' : 'batches');
    assert.equal(retryWord, retries === '1' ? 'retry' : 'retries');
  });

  it('answers a question about the payments in SQL, and the SQL it shows gives that answer', async () => {
    const { rows, sql } = paymentsBlock(first.stdout);
    assert.ok(rows.length > 0, 'D07 has payments');
    assert.match(sql, /^SELECT .+ FROM d07/s);
    const answer = await query(join(out, 'lender.duckdb'), sql);
    assert.deepEqual(rows, answer.map((a) => [String(a.month), String(a.status), String(a.payments), String(a.amount)]));
    for (const [month, status] of rows) {
      assert.match(month!, /^\d{4}-\d{2}$/);
      assert.match(status!, /^[A-Z_]+$/);
    }
    assert.ok(new Set(rows.map((r) => r[0])).size <= 3, 'the last three months');
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

  it('a second run is an incremental sync: fewer rows fetched, each row still once in its table', async () => {
    const before = new Map(datasetRows(first.stdout).map((r) => [r.code, r]));
    second = await runDemo(out);
    assert.equal(second.code, 0, second.stderr);
    const rows = datasetRows(second.stdout);
    assert.equal(rows.length, before.size);
    assert.match(second.stdout, /^Incremental sync of \d+ datasets/m);
    const counts = await tableCounts(join(out, 'lender.duckdb'), rows.map((r) => r.code));
    let fetchedBefore = 0;
    let fetchedNow = 0;
    for (const r of rows) {
      const prior = before.get(r.code);
      assert.ok(prior, r.code);
      assert.equal(r.mode, 'incremental', r.code);
      const stored = counts.get(r.code)!;
      assert.equal(r.inTable, stored.rows, r.code);
      assert.equal(stored.keys, stored.rows, `${r.code}: one row per identity after the upserts`);
      assert.ok(stored.rows >= prior.inTable && stored.rows <= prior.inTable + r.fetched,
        `${r.code}: ${stored.rows} rows, from ${prior.inTable} and ${r.fetched} fetched`);
      fetchedBefore += prior.fetched;
      fetchedNow += r.fetched;
    }
    assert.ok(fetchedNow < fetchedBefore, `incremental fetched ${fetchedNow}, initial ${fetchedBefore}`);
    // The re-pushed portfolio carries fresh timestamps, so the incremental load finds it, and
    // its rows replace the stored versions instead of adding to them.
    const d03 = rows.find((r) => r.code === 'D03')!;
    assert.ok(d03.fetched > 0, 'the re-pushed sub-accounts are fetched again');
    assert.equal(d03.inTable, before.get('D03')!.inTable, 'the same sub-accounts, updated in place');
    const push = pushLine(second.stdout);
    const rejects = (await readFile(join(out, 'rejects.ndjson'), 'utf8')).split('\n').filter((l) => l !== '');
    assert.equal(rejects.length, push.rejected, 'the rejects file holds this run\'s rejects only');
    assert.deepEqual(paymentsBlock(second.stdout).rows, paymentsBlock(first.stdout).rows, 'the payments did not change');
  });
});

describe('lender demo on a folder another run holds', { timeout: 120_000 }, () => {
  it('is refused before it writes anything there: the other run\'s rejects file is kept', async () => {
    const out = await mkdtemp(join(tmpdir(), 'lender-demo-held-'));
    const rejects = join(out, 'rejects.ndjson');
    const theirs = '{"position":1,"reason":"invalid","errors":["the other run\'s reject"]}\n';
    await writeFile(rejects, theirs);
    // This process holds the database, as a demo that is still running would.
    const sink = duckdbSink({ path: join(out, 'lender.duckdb') });
    const hold = await sink.lock();
    try {
      const refused = await runDemo(out);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, new RegExp(`^lender demo: .*lender\\.duckdb is open in another process \\(pid ${process.pid}\\), ` +
        'another demo or a DuckDB session on that file: wait for it to end or close it, or give another --out\\.\\n$'));
      assert.equal(refused.stdout, '');
      assert.equal(await readFile(rejects, 'utf8'), theirs);
    } finally {
      await hold.release();
      await sink.close();
      await rm(out, { recursive: true, force: true });
    }
  });
});
