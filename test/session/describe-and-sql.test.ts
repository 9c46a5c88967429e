// describe() and sql() of a session on the embedded sandbox over HTTPS, with a real DuckDB file:
// what describe() says is checked against the rows themselves, and sql() against what sync stored.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { openSession, type LenderSession } from '../../src/session.ts';
import { describeDataset, summarizeFields } from '../../src/session/describe.ts';
import { ServerError } from '../../src/core/errors.ts';
import { redactText } from '../../src/core/redact.ts';
import { findLeaks } from '../../src/session/secrets.ts';
import type { RequestOptions } from '../../src/core/api.ts';
import type { DatasetRef, ExportPageBody, PageQuery } from '../../src/core/types.ts';
import { FakeApi, makeRows } from '../exports/fake-api.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

describe('describe() and sql()', () => {
  let session: LenderSession;
  const dir = mkdtempSync(join(tmpdir(), 'lender-describe-sql-'));
  const database = join(dir, 'lender.duckdb');

  before(async () => {
    session = await openSession({ sandbox: { seed: 11, scale: 400 } });
  });
  after(async () => {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('describe() gives each field its type, null share and distinct values in the sample, the cursor span and the count', async () => {
    const d = await session.describe('D07', { sample: 150 });
    const rows = await session.rows('D07', { limit: 150 });
    const all: Record<string, unknown>[] = [];
    for await (const row of session.stream('D07')) all.push(row as Record<string, unknown>);
    assert.equal(d.dataset, 'D07');
    assert.equal(d.sampled, 150);
    assert.equal(d.total?.total, all.length);
    const cursors = all.map((r) => String(r.updated_at)).sort();
    assert.deepEqual(d.cursor, { field: 'updated_at', first: cursors[0], last: cursors.at(-1) });
    assert.deepEqual(d.map((f) => f.field), Object.keys(rows[0]!));
    for (const f of d) {
      const values = rows.map((r) => r[f.field]);
      const present = values.filter((v) => v !== null && v !== undefined);
      assert.equal(f.nulls, `${((100 * (values.length - present.length)) / values.length).toFixed(1)}%`, f.field);
      assert.equal(f.distinct, new Set(present.map((v) => JSON.stringify(v))).size, f.field);
    }
    const types = Object.fromEntries(d.map((f) => [f.field, f.type]));
    assert.equal(types.public_id, 'text');
    assert.equal(types.amount, 'integer');
    assert.equal(types.is_settled, 'boolean');
    assert.equal(types.created_at, 'timestamp');
    assert.match(inspect(d), /^D07 Borrower Payments: [\d,]+ rows, updated_at from \S+ to \S+; fields of the first 150 rows:\nfield\s+type\s+nulls\s+distinct\n/);
    assert.match(d.html(), /^<p>D07 Borrower Payments: .*<\/p>\n<table>/);
  });

  it('describe() of a via dataset counts it month by month', async () => {
    const d = await session.describe('D23', { sample: 20 });
    assert.equal(d.cursor.field, 'communicated_at');
    assert.ok((d.total?.windows ?? 0) > 1);
    assert.equal(d.total?.total, (await session.count('D23')).total);
  });

  it('count() refuses a bad since, until or concurrency for direct and via datasets alike, before asking the service', async () => {
    for (const code of ['D07', 'D23'] as const) {
      for (const [opts, message] of [
        [{ since: 'garbage' }, /since "garbage" is not an ISO-8601 timestamp/], [{ until: '31/12/2026' }, /until "31\/12\/2026"/],
        [{ concurrency: 0 }, /^concurrency must be a whole number of at least 1, not 0$/],
      ] as const) {
        await assert.rejects(session.count(code, opts), (error: unknown) => {
          assert.equal((error as Error).name, 'ConfigError', `${code} ${JSON.stringify(opts)}: ${String(error)}`);
          assert.match((error as Error).message, message);
          return true;
        });
      }
    }
    assert.equal((await session.count('D07', { since: '2000-01-01T00:00:00Z' })).total, (await session.count('D07')).total, 'a good since is taken');
  });

  it('knownSecrets(): strings to the filters that iterate it, [redacted] when printed (a notebook prints a cell\'s value unscrubbed)', () => {
    const secrets = session.knownSecrets();
    const password = [...secrets][0]!;
    assert.ok(password.length >= 8);
    for (const shown of [inspect(secrets), inspect({ secrets }), JSON.stringify(secrets), JSON.stringify({ secrets }), String(secrets), `${secrets}`]) {
      assert.ok(!shown.includes(password), shown);
      assert.match(shown, /redacted/);
    }
    assert.equal(redactText(`x ${password} y`, secrets), 'x [redacted] y');
    assert.ok(findLeaks(`x ${password} y`, secrets).length > 0);
  });

  it('field types: mixed numbers are numbers, two kinds are both named, only nulls is null', () => {
    const fields = summarizeFields([{ a: 1, b: 'x', c: null, d: { k: 1 } }, { a: 1.5, b: 2, c: null, d: { k: 1 } }, { a: -0, b: 'x' }]);
    assert.deepEqual(fields, [
      { field: 'a', type: 'number', nulls: '0.0%', distinct: 3 },
      { field: 'b', type: 'integer|text', nulls: '0.0%', distinct: 2 },
      { field: 'c', type: 'null', nulls: '100.0%', distinct: 0 },
      { field: 'd', type: 'json', nulls: '33.3%', distinct: 1 },
    ]);
    assert.deepEqual(summarizeFields([]), []);
  });

  it('sql() before any sync says to sync first, and creates no file', async () => {
    await assert.rejects(session.sql('SELECT 1', { database }), /There is no DuckDB database at .*lender\.duckdb; sync into it first/);
    await assert.rejects(session.sql('  '), /sql\(\) needs a query/);
  });

  it('sql() queries what sync stored in DuckDB, counts as numbers; the file is free again after', async () => {
    const first = await session.sync(['D07'], { to: `duckdb:${database}` });
    assert.equal(first.datasets.D07!.mode, 'initial');
    const total = (await session.count('D07')).total;
    const [counted] = await session.sql('SELECT count(*) AS n, count(DISTINCT public_id) AS ids FROM d07', { database });
    assert.deepEqual(counted, { n: total, ids: total });
    const byStatus = await session.sql('SELECT payment_status AS status, count(*) AS n FROM d07 GROUP BY ALL ORDER BY status', { database });
    const expected = new Map<string, number>();
    for await (const row of session.stream('D07')) {
      const status = String((row as Record<string, unknown>).payment_status);
      expected.set(status, (expected.get(status) ?? 0) + 1);
    }
    assert.deepEqual(byStatus.map((r) => [r.status, r.n]), [...expected].sort());
    assert.deepEqual(byStatus.columns, ['status', 'n']);
    assert.match(inspect(byStatus), new RegExp(`^${expected.size} rows\nstatus\\s+n\n`));
    assert.match(byStatus.html(), /^<table>\n<thead><tr><th>status<\/th><th style="text-align:right">n<\/th><\/tr><\/thead>/);
    // The file was closed: the next sync opens it, incrementally.
    session.sandbox!.advance();
    const next = await session.sync(['D07'], { to: `duckdb:${database}` });
    assert.equal(next.datasets.D07!.mode, 'incremental');
    const [after] = await session.sql('SELECT count(*) AS n FROM d07', { database });
    assert.equal(after!.n, (await session.count('D07')).total);
    await assert.rejects(session.sql('SELECT * FROM no_such_table', { database }), /DuckDB could not run the query on .*: Catalog Error/);
  });

  it('sql() and sync() of the session on one file take turns: a query asked for during a sync not awaited waits for it', async () => {
    const file = join(dir, 'turns.duckdb');
    const loading = session.sync(['D07'], { to: `duckdb:${file}` });
    const [counted] = await session.sql('SELECT count(*) AS n FROM d07', { database: file });
    const loaded = await loading;
    assert.equal(counted!.n, loaded.datasets.D07!.rows, 'the query saw the whole sync');
    assert.ok(loaded.datasets.D07!.rows > 0);
  });

  it('sql() while another process holds the file is refused, naming the holder', async () => {
    const holder = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
      const { duckdbSink } = await import('./src/sinks/duckdb-sink.ts');
      const sink = duckdbSink({ path: ${JSON.stringify(database)} });
      await sink.lock();
      process.stdout.write('holding\\n');
      process.stdin.resume();
      process.stdin.on('end', () => process.exit(0));`], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const lines = createInterface({ input: holder.stdout! });
      const [line] = await once(lines, 'line');
      assert.equal(line, 'holding');
      await assert.rejects(session.sql('SELECT 1', { database }), (error: Error) => {
        assert.equal(error.name, 'DuckDbLockedError');
        assert.match(error.message, new RegExp(`is open in another process \\(pid ${holder.pid}\\)`));
        return true;
      });
    } finally {
      holder.stdin!.end();
      await once(holder, 'exit');
    }
    assert.equal((await session.sql('SELECT 1 AS one', { database }))[0]!.one, 1);
  });
});

describe('describe() when one of its reads fails', () => {
  // A timeout: reads that are never stopped would wait forever.
  it('fails with that error, and the other reads are stopped rather than left running', { timeout: 30_000 }, async () => {
    let stopped = 0;
    class FailingCountApi extends FakeApi {
      override async fetchPage(_ref: DatasetRef, query: PageQuery, opts: RequestOptions = {}): Promise<ExportPageBody> {
        if (query.includeTotal === true) throw new ServerError('the count failed', { status: 500 });
        // The row reads answer only by being stopped.
        return new Promise<never>((_, reject) => opts.signal!.addEventListener('abort', () => {
          stopped += 1;
          reject(opts.signal!.reason as Error);
        }, { once: true }));
      }
    }
    const api = new FailingCountApi({ rows: makeRows(10) });
    await assert.rejects(describeDataset(api, 'D07'), { message: 'the count failed' });
    assert.equal(stopped, 2, 'both row reads were stopped');
  });
});
