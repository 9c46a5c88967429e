// The DuckDB sink on real DuckDB files: sync() against the sandbox over HTTPS equals the reference
// walk row for row and keeps each row once in its latest version after the data moved; columns
// evolve and misfit values are kept; a commit is all or nothing; one writer per file; the file is
// owner-only; importing the library loads no native code. The appender's values are checked
// against columns.ts rowValues first, with no database at all.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { DuckDBAppender } from '@duckdb/node-api';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import type { ExportRow } from '../../src/core/types.ts';
import { canonicalJson } from '../../src/exports/highwater.ts';
import type { DatasetState } from '../../src/exports/state.ts';
import { Rng } from '../../src/prng.ts';
import { initialColumns, MISMATCH_COLUMN, rowValues, TableShape } from '../../src/sinks/columns.ts';
import { appendRows, ROWS_PER_TURN, rowsToObserve } from '../../src/sinks/duckdb/append-rows.ts';
import { KeySet } from '../../src/sinks/duckdb/key-set.ts';
import { columnTypeOfSql, DUCKDB_NAMING, hasRowid, mergeSql, MISMATCH, tableColumn } from '../../src/sinks/duckdb/sql.ts';
import { DuckDbLockedError, duckdbSink, type DuckDbSink, type DuckDbSinkOptions } from '../../src/sinks/duckdb-sink.ts';
import { SinkError } from '../../src/sinks/errors.ts';
import { openSink } from '../../src/sinks/open-sink.ts';
import type { Sink, SinkDataset, SinkNotice } from '../../src/sinks/sink.ts';
import { parseSinkSpec } from '../../src/sinks/sink-spec.ts';
import { sync } from '../../src/sinks/sync.ts';
import { fixture, type Fixture } from '../exports/helpers.ts';
import { countForcedGcs } from '../helpers/forced-gcs.ts';
import { EVERYTHING, plainWalk } from '../helpers/plain-walk.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const SINK_MODULE = new URL('../../src/sinks/duckdb-sink.ts', import.meta.url).pathname;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lender-duckdb-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

let files = 0;
const newFile = (): string => join(dir, `db-${(files += 1)}`, 'lender.duckdb');

/** Runs `use` on a sink opened with `opts`, and closes it whatever happens. */
async function withSink(opts: DuckDbSinkOptions, use: (sink: DuckDbSink) => Promise<void>): Promise<void> {
  const sink = duckdbSink(opts);
  try {
    await use(sink);
  } finally {
    await sink.close();
  }
}

function dataset(code: string, identity: 'key' | 'content' = 'key', cursorField = 'updated_at'): SinkDataset {
  return { code, section: 'S9', key: code, cursorField, identity };
}

function state(code: string, value: string | null, open = false): DatasetState {
  return {
    version: 1, dataset: code, highWater: value === null ? null : { value, ids: [] },
    load: open ? { kind: 'initial', end: '2100-01-01T00:00:00.000Z', since: null, until: null, origin: '2000-01-01T00:00:00.000Z', windowing: { kind: 'none' }, sort: 'asc', skip: null, position: null } as unknown as DatasetState['load'] : null,
  };
}

/** A stored row as the service sent it: typed columns back to JSON values, `_mismatched` merged
 * in, NULLs left out (a field the service sent as null and one it did not send are both NULL). */
function restored(stored: Record<string, unknown>, types: ReadonlyMap<string, string>): ExportRow {
  const row: ExportRow = {};
  for (const [name, value] of Object.entries(stored)) {
    if (name === '_row_key' || value === null) continue;
    if (name === MISMATCH_COLUMN) {
      Object.assign(row, JSON.parse(value as string));
      continue;
    }
    const type = types.get(name);
    row[name] = type === 'TIMESTAMP WITH TIME ZONE' ? (value as Date).toISOString()
      : type === 'BIGINT' ? Number(value)
      : type === 'JSON' ? JSON.parse(value as string)
      : value;
  }
  return row;
}

const withoutNulls = (row: ExportRow): ExportRow => Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null));

/** The table's rows as sorted canonical JSON. */
async function tableRows(sink: DuckDbSink, table: string): Promise<string[]> {
  const columns = await sink.query(`SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = '${table}'`);
  const types = new Map(columns.map((c) => [c.column_name as string, c.data_type as string]));
  const rows = await sink.query(`SELECT * FROM ${table}`);
  return rows.map((r) => canonicalJson(restored(r, types))).sort();
}

/** No identity appears twice in the table (what a primary key would have enforced). */
async function assertUnique(sink: DuckDbSink, table: string, key: string): Promise<void> {
  const [counts] = await sink.query(`SELECT count(*) AS n, count(DISTINCT "${key}") AS ids, count("${key}") AS keyed FROM ${table}`);
  assert.equal(counts!.n, counts!.ids, `one row per ${key} in ${table}`);
  assert.equal(counts!.n, counts!.keyed, `every row of ${table} has a ${key}`);
}

/** The reference rows as sorted canonical JSON, each distinct row once. */
function referenceRows(rows: readonly ExportRow[]): string[] {
  return [...new Set(rows.map((r) => canonicalJson(withoutNulls(r))))].sort();
}

// ---------------------------------------------------------------- pure parts

describe('values and statements', () => {
  /** An appender that records what it is given, one array per row. */
  function recordingAppender(): { appender: DuckDBAppender; rows: unknown[][] } {
    const rows: unknown[][] = [];
    let row: unknown[] = [];
    const put = (v: unknown) => void row.push(v);
    const appender = {
      appendNull: () => put(null), appendVarchar: put, appendInteger: put, appendBigInt: (v: bigint) => put(Number(v)),
      appendDouble: put, appendBoolean: put,
      endRow: () => {
        rows.push(row);
        row = [];
      },
    } as unknown as DuckDBAppender;
    return { appender, rows };
  }

  test('the appender gets the values of rowValues: fitting values in their columns, the rest in _mismatched', async () => {
    const ds = dataset('D42');
    // 'B' and '_Mismatched' clash with 'b' and '_mismatched' in DuckDB's eyes; '' cannot be a column.
    // The last three are names every object has: a row without them holds no such field.
    const field = fc.constantFrom('a', 'b', 'B', 'c', '', '_mismatched', '_Mismatched', '_row_key', 'updated_at', 'toString', 'constructor', '__proto__');
    const value = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(),
      fc.constant('2025-01-02T03:04:05.678Z'), fc.constant('2025-02-30T03:04:05Z'), fc.constant('2025-01-02T24:00:00.1234567Z'),
      fc.array(fc.integer(), { maxLength: 2 }), fc.constant(2 ** 40));
    const row = fc.record({ public_id: fc.constantFrom('p1', 'p2', 'p3'), fields: fc.dictionary(field, value, { maxKeys: 5 }) })
      .map(({ public_id, fields }) => ({ ...fields, public_id }) as ExportRow);
    await fc.assert(fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 8 }), async (rows) => {
      const shape = new TableShape(initialColumns(ds), DUCKDB_NAMING);
      shape.observe(rows);
      // `_mismatched` last (the tables the sink makes) and before other columns (one added later).
      for (const columns of [[...shape.columns.map(tableColumn), MISMATCH], [MISMATCH, ...shape.columns.map(tableColumn)]]) {
        const byKey = new Map(rows.map((r) => [r.public_id as string, r]));
        const { appender, rows: appended } = recordingAppender();
        await appendRows(appender, byKey, columns, 'public_id', shape.homeless);
        assert.equal(appended.length, byKey.size);
        [...byKey.values()].forEach((r, i) => {
          const { values, mismatched } = rowValues(r, shape);
          const got = appended[i]!;
          assert.equal(got.length, columns.length);
          columns.forEach((c, j) => {
            if (c.name === MISMATCH_COLUMN) {
              // The column holds JSON text, so compare as JSON (JSON.stringify writes -0 as 0).
              assert.deepEqual(got[j] === null ? null : JSON.parse(got[j] as string), mismatched === null ? null : JSON.parse(JSON.stringify(mismatched)));
            } else {
              const want = values.get(c.name) ?? null;
              assert.deepEqual(got[j], c.type === 'json' && want !== null ? JSON.stringify(want) : want, c.name);
            }
          });
        });
      }
    }), { numRuns: 300 });
  });

  test('a group of rows is appended a slice at a time, with a turn of the event loop between slices', async () => {
    const ds = dataset('D42');
    const rows = Array.from({ length: 2 * ROWS_PER_TURN + 1 }, (_, i) => ({ public_id: `p${i}`, a: i }) as ExportRow);
    const shape = new TableShape(initialColumns(ds), DUCKDB_NAMING);
    shape.observe(rows);
    const columns = [...shape.columns.map(tableColumn), MISMATCH];
    const { appender, rows: appended } = recordingAppender();
    const at: number[] = [];
    await appendRows(appender, new Map(rows.map((r) => [r.public_id as string, r])), columns, 'public_id', [], async () => {
      at.push(appended.length);
    });
    assert.deepEqual(at, [ROWS_PER_TURN, 2 * ROWS_PER_TURN], 'a turn after each full slice, none before the first row or after the last');
    assert.deepEqual(appended.map((r) => r[columns.findIndex((c) => c.name === 'a')]), rows.map((r) => r.a), 'every row, in order');
    // The default turn lets I/O callbacks run: an immediate queued before the append runs during it.
    let ranDuring = false;
    const before = new Promise<void>((resolve) => setImmediate(() => {
      ranDuring = appended.length < 2 * (2 * ROWS_PER_TURN + 1);
      resolve();
    }));
    await appendRows(appender, new Map(rows.map((r) => [r.public_id as string, r])), columns, 'public_id');
    await before;
    assert.equal(ranDuring, true, 'the event loop turned while the rows were appended');
  });

  test('observing only rowsToObserve changes a shape and reports exactly what observing every row does', () => {
    const ds = dataset('D42');
    // 'B', 'A' and '' get no column under DuckDB's naming (TableShape.homeless).
    const field = fc.constantFrom('a', 'b', 'B', 'A', '', 'c', '_mismatched', '_row_key', 'updated_at', 'public_id');
    const value = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true }), fc.string(), fc.constant('2025-01-02T03:04:05.678Z'),
      fc.constant('2025-02-30T03:04:05Z'), fc.constant('2025-13-01T00:00:00Z'), fc.array(fc.integer(), { maxLength: 2 }), fc.constant(2 ** 60));
    const page = fc.array(fc.dictionary(field, value, { maxKeys: 5 }), { maxLength: 6 });
    fc.assert(fc.property(fc.array(page, { minLength: 1, maxLength: 4 }), (pages) => {
      const all = new TableShape(initialColumns(ds), DUCKDB_NAMING);
      const some = new TableShape(initialColumns(ds), DUCKDB_NAMING);
      for (const rows of pages) {
        assert.deepEqual(some.observe(rowsToObserve(some, rows)), all.observe(rows));
        assert.deepEqual(some.columns, all.columns);
        assert.deepEqual(some.homeless, all.homeless);
      }
    }), { numRuns: 500 });
  });

  test('catalog types map back to column types; the merge keeps a newer stored version', () => {
    assert.equal(columnTypeOfSql('TIMESTAMP WITH TIME ZONE'), 'timestamptz');
    assert.equal(columnTypeOfSql('BIGINT'), 'bigint');
    assert.equal(columnTypeOfSql('INTEGER'), 'bigint');
    assert.equal(columnTypeOfSql('DECIMAL(18,3)'), 'double');
    assert.equal(columnTypeOfSql('JSON'), 'json');
    assert.equal(columnTypeOfSql('DATE'), 'text');
    const [match, remove, insert] = mergeSql('d"07', 'public_id', 'up"dated');
    assert.match(match!, /coalesce\(stored\."up""dated" IS NULL OR page\."up""dated" >= stored\."up""dated", false\) AS replaced FROM "d""07" AS stored JOIN/);
    assert.match(remove!, /^DELETE FROM "d""07" WHERE rowid IN \(SELECT stored_row FROM _lender_match WHERE replaced\)$/);
    assert.match(insert!, /^INSERT INTO "d""07" SELECT \* FROM _lender_page WHERE "public_id" NOT IN \(SELECT key FROM _lender_match WHERE NOT replaced\)$/);
    // A column named rowid hides DuckDB's: the rows are then deleted through the key.
    assert.equal(hasRowid([{ name: 'public_id' }, { name: 'RowId' }]), false);
    const [, byKey] = mergeSql('d07', 'public_id', 'updated_at', false);
    assert.match(byKey!, /^DELETE FROM "d07" AS stored USING _lender_page AS page WHERE stored\."public_id" = page\."public_id" AND coalesce\(/);
  });
});

// ---------------------------------------------------------------- against the sandbox

describe('sync() into DuckDB', () => {
  let f: Fixture;
  let path: string;
  let sink: DuckDbSink;
  const notices: SinkNotice[] = [];
  const CODES = ['D07', 'D03', 'D16'] as const;

  before(async () => {
    f = await fixture({ seed: 41, scale: 300 });
    path = newFile();
    sink = duckdbSink({ path, onNotice: (n) => notices.push(n) });
  });
  after(async () => {
    await sink?.close();
    await f?.close();
  });

  async function sandboxPost(route: string, body?: unknown): Promise<unknown> {
    const agent = new Agent({ connect: { ca: f.sandbox.ca } });
    try {
      const res = await request(`${f.sandbox.authUrl}${route}`, {
        method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}),
      });
      const text = await res.body.text();
      assert.equal(res.statusCode, 200, route);
      return JSON.parse(text) as unknown;
    } finally {
      await agent.close();
    }
  }

  test('an initial sync stores exactly the reference walk of each dataset, D07 in its documented types', async () => {
    const summary = await sync(f.client, CODES, { to: sink, limit: 50 });
    for (const code of CODES) {
      assert.equal(summary[code]!.mode, 'initial');
      assert.equal(summary[code]!.location, `${path}#${code.toLowerCase()}`);
      const reference = await plainWalk(f.client, code, EVERYTHING);
      assert.ok(reference.length > 0, `${code} has rows`);
      assert.deepEqual(await tableRows(sink, code.toLowerCase()), referenceRows(reference), code);
    }
    assert.ok(summary.D03!.windows > 1, 'D03 is read through windows (a via dataset)');

    const types = await sink.query(`SELECT column_name AS name, data_type AS type FROM duckdb_columns() WHERE table_name = 'd07'`);
    const typeOf = new Map(types.map((r) => [r.name, r.type]));
    assert.equal(typeOf.get('amount'), 'BIGINT');
    assert.equal(typeOf.get('is_settled'), 'BOOLEAN');
    assert.equal(typeOf.get('updated_at'), 'TIMESTAMP WITH TIME ZONE');
    assert.equal(typeOf.get('paid_date'), 'TIMESTAMP WITH TIME ZONE');
    assert.equal(typeOf.get('payment_status'), 'VARCHAR');
    assert.equal(typeOf.get(MISMATCH_COLUMN), 'JSON');
    // No index on the datasets' tables (the sink keeps identities unique itself): the state's key only.
    const keys = await sink.query(`SELECT table_name AS t, constraint_column_names AS c FROM duckdb_constraints() WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE')`);
    assert.deepEqual(keys.map((k) => `${k.t}:${(k.c as string[]).join(',')}`), ['_lender_state:key']);
    assert.deepEqual(await sink.query(`SELECT index_name FROM duckdb_indexes()`), []);
    for (const [table, key] of [['d03', 'public_id'], ['d07', 'public_id'], ['d16', '_row_key']] as const) await assertUnique(sink, table, key);

    // The state is in the database, one row per dataset, complete.
    const states = await sink.query(`SELECT key, CAST(state AS VARCHAR) AS state FROM _lender_state ORDER BY key`);
    assert.deepEqual(states.map((s) => s.key), ['D03', 'D07', 'D16']);
    for (const s of states) assert.equal((JSON.parse(s.state as string) as DatasetState).load, null, `${s.key} completed`);
    // A table is made with the columns of its first page; a field that page had only as null
    // comes later, as a new column, told once.
    assert.deepEqual(notices.filter((n) => n.kind === 'table-created').map((n) => n.dataset).sort(), ['D03', 'D07', 'D16']);
    const added = notices.filter((n) => n.kind !== 'table-created');
    assert.ok(added.every((n) => n.kind === 'column-added'), JSON.stringify(added));
    assert.equal(new Set(added.map((n) => n.message)).size, added.length, 'each column told once');
  });

  test('after advance() and churn, the next syncs leave every row once, in its latest version', async () => {
    const before = new Map<string, number>();
    for (const code of CODES) before.set(code, (await sink.query(`SELECT count(*) AS n FROM ${code.toLowerCase()}`))[0]!.n as unknown as number);
    await sandboxPost('/__sandbox/advance');
    // Rows change while the next sync reads, too (its pages slowed so that it reads for a while).
    await sandboxPost('/__sandbox/faults', { latencyMs: 30, faults: {} });
    await sandboxPost('/__sandbox/churn', { rate: 300 });
    let summary;
    let churned;
    try {
      summary = await sync(f.client, CODES, { to: sink, limit: 50 });
    } finally {
      churned = (await sandboxPost('/__sandbox/churn', { rate: 0 })) as { written: number };
      await sandboxPost('/__sandbox/faults', { latencyMs: 0, faults: {} });
    }
    assert.ok(churned.written > 0, 'rows changed during the sync');
    assert.equal(summary.D07!.mode, 'incremental');
    assert.ok(summary.D07!.rows > 0, 'the advance changed D07');
    // Rows churned after that run read past them come with the next.
    await sync(f.client, CODES, { to: sink, limit: 50 });
    for (const code of ['D07', 'D03'] as const) {
      assert.deepEqual(await tableRows(sink, code.toLowerCase()), referenceRows(await plainWalk(f.client, code, EVERYTHING)), code);
    }
    // D16's rows have no identity but their content: an updated row is a new row, and the version
    // it replaced stays (docs/sinks.md).
    const current = referenceRows(await plainWalk(f.client, 'D16', EVERYTHING));
    const stored = await tableRows(sink, 'd16');
    assert.deepEqual(current.filter((r) => !stored.includes(r)), [], 'every current D16 row is stored');
    const currentIds = new Set(current.map((r) => (JSON.parse(r) as ExportRow).public_id));
    const older = stored.filter((r) => !current.includes(r));
    assert.ok(older.every((r) => currentIds.has((JSON.parse(r) as ExportRow).public_id)), 'the others are older versions of current rows');
    for (const [table, key] of [['d03', 'public_id'], ['d07', 'public_id'], ['d16', '_row_key']] as const) await assertUnique(sink, table, key);
    const [{ rows }] = await sink.query(`SELECT count(*) AS rows FROM d07`) as [{ rows: bigint }];
    assert.ok(Number(rows) >= Number(before.get('D07')), 'nothing was lost');
    // Nothing changed since: one more run fetches nothing.
    const last = await sync(f.client, CODES, { to: sink });
    for (const code of CODES) assert.equal(last[code]!.rows, 0, code);
  });

  test('the database file is readable by its owner only, and so are its log and its temporary folder', async () => {
    assert.equal(statSync(path).mode & 0o777, 0o600);
    if (existsSync(`${path}.wal`)) assert.equal(statSync(`${path}.wal`).mode & 0o777, 0o600);
    // Where DuckDB writes what does not fit in its memory limit: made before DuckDB uses it.
    assert.equal(statSync(`${path}.tmp`).mode & 0o777, 0o700);
  });
});

describe('a new database file', () => {
  test('is made in a private folder of its own beside it; such folders left by a killed process are removed', async () => {
    const path = newFile();
    const folder = dirname(path);
    mkdirSync(folder);
    // A pid no process has: a child that has exited.
    const child = spawnSync(process.execPath, ['-e', '']);
    assert.equal(child.status, 0);
    const dead = child.pid!;
    const left = (pid: number, suffix: string, ageMs: number): string => {
      const name = `.lender-new-${pid}-${suffix}`;
      mkdirSync(join(folder, name));
      writeFileSync(join(folder, name, 'lender.duckdb'), '');
      const at = (Date.now() - ageMs) / 1000;
      utimesSync(join(folder, name), at, at);
      return name;
    };
    left(dead, 'aaaaaa', 2 * 60_000); // removed: its process is gone
    const justNow = left(dead, 'bbbbbb', 0); // kept: maybe a process this one cannot see, still at it
    const alive = left(process.pid, 'cccccc', 2 * 60_000);
    left(process.pid, 'dddddd', 2 * 3_600_000); // removed: too old to be at it, whoever
    const other = '.lender-new-notes';
    mkdirSync(join(folder, other));
    await withSink({ path }, async (sink) => {
      await sink.lock().then((hold) => hold.release());
    });
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(folder).filter((name) => name.startsWith('.lender-new-')).sort(), [justNow, alive, other].sort());

    // Killed after linking the new file into place: its folder holds a second link to the
    // database, removed at the next open of the file that exists now.
    const linked = `.lender-new-${dead}-eeeeee`;
    mkdirSync(join(folder, linked));
    linkSync(path, join(folder, linked, 'lender.duckdb'));
    const old = (Date.now() - 2 * 60_000) / 1000;
    utimesSync(join(folder, linked), old, old);
    assert.equal(statSync(path).nlink, 2);
    await withSink({ path }, async (sink) => {
      await sink.lock().then((hold) => hold.release());
    });
    assert.equal(existsSync(join(folder, linked)), false);
    assert.equal(statSync(path).nlink, 1);
  });
});

describe('a file that is not a DuckDB database', () => {
  test('is refused before DuckDB opens it, and left as it was: CSV, JSON, NDJSON, Parquet, text, empty', async () => {
    // DuckDB itself opens the data files as an in-memory database with a view of them: a sync
    // there loaded every row, kept none, and reported success.
    const folder = join(dir, 'data-files');
    mkdirSync(folder);
    const files: Record<string, string> = {
      'accounts.csv': 'public_id,amount\nA1,10\n', 'rows.json': '[{"public_id":"A1"}]', 'rows.ndjson': '{"public_id":"A1"}\n',
      'notes.txt': 'not a database', 'empty.duckdb': '',
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text, { mode: 0o644 });
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const maker = await DuckDBInstance.create(':memory:');
    const parquet = join(folder, 'rows.parquet');
    try {
      const conn = await maker.connect();
      await conn.run(`COPY (SELECT 'A1' AS public_id, 10 AS amount) TO '${parquet}' (FORMAT parquet)`);
      conn.closeSync();
    } finally {
      maker.closeSync();
    }
    chmodSync(parquet, 0o644);
    for (const name of [...Object.keys(files), 'rows.parquet']) {
      const path = join(folder, name);
      const before = readFileSync(path);
      const sink = duckdbSink({ path });
      try {
        await assert.rejects(sink.open(dataset('D07')), (error: unknown) => error instanceof SinkError &&
          error.message === `${path} exists but is not a DuckDB database; choose another path for the sync.`, name);
      } finally {
        await sink.close();
      }
      assert.deepEqual(readFileSync(path), before, `${name} is unchanged`);
      assert.equal(statSync(path).mode & 0o777, 0o644, `${name} keeps its mode`);
    }
    assert.deepEqual(readdirSync(folder).sort(), [...Object.keys(files), 'rows.parquet'].sort(), 'no log, temporary folder or new file beside them');
  });
});

// ---------------------------------------------------------------- pages by hand

describe('commits', () => {
  test('a page is upserted by identity: of versions in a page the newest wins (ties: the later), an older version never replaces a newer one', async () => {
    await withSink({ path: newFile() }, async (sink) => {
      const ds = dataset('D07');
      await sink.open(ds);
      const row = (id: string, updated: string, amount: number) => ({ public_id: id, updated_at: updated, amount, payment_status: 'SUCCESS' });
      await sink.commit({ dataset: ds, rows: [row('a', '2025-01-02T00:00:00.000Z', 1), row('b', '2025-01-02T00:00:00.000Z', 1), row('a', '2025-01-02T00:00:00.000Z', 2)], state: state('D07', 'v1') });
      // The table holds these keys now: this page goes through the upsert.
      await sink.commit({ dataset: ds, rows: [row('a', '2025-01-01T00:00:00.000Z', 9), row('b', '2025-01-03T00:00:00.000Z', 3), row('c', '2025-01-01T00:00:00.000Z', 4)], state: state('D07', 'v2') });
      // An equal cursor value replaces (the later read wins), and a field the new version lacks becomes NULL.
      await sink.commit({ dataset: ds, rows: [{ public_id: 'c', updated_at: '2025-01-01T00:00:00.000Z', amount: 5 }], state: state('D07', 'v3') });
      const rows = await sink.query(`SELECT public_id, amount, payment_status FROM d07 ORDER BY public_id`);
      assert.deepEqual(rows, [
        { public_id: 'a', amount: 2n, payment_status: 'SUCCESS' },
        { public_id: 'b', amount: 3n, payment_status: 'SUCCESS' },
        { public_id: 'c', amount: 5n, payment_status: null },
      ]);
      assert.equal((await sink.open(ds))?.highWater?.value, 'v3');
    });
  });

  test("instants keep their microseconds; a 'content' identity keeps distinct rows that share a public_id", async () => {
    await withSink({ path: newFile() }, async (sink) => {
      const ds = dataset('D16', 'content');
      await sink.open(ds);
      const rows = [
        { public_id: 'CASE-1', stage: 'NEW', updated_at: '2025-01-02T03:04:05.123456Z' },
        { public_id: 'CASE-1', stage: 'CONTACTED', updated_at: '2025-01-02T03:04:05.123456Z' },
        { public_id: 'CASE-1', stage: 'NEW', updated_at: '2025-01-02T03:04:05.123456Z' },
      ];
      await sink.commit({ dataset: ds, rows, state: state('D16', 'x') });
      await sink.commit({ dataset: ds, rows: rows.slice(0, 1), state: state('D16', 'y') });
      const stored = await sink.query(`SELECT stage, strftime(updated_at, '%Y-%m-%dT%H:%M:%S.%fZ') AS at FROM d16 ORDER BY stage`);
      assert.deepEqual(stored, [{ stage: 'CONTACTED', at: '2025-01-02T03:04:05.123456Z' }, { stage: 'NEW', at: '2025-01-02T03:04:05.123456Z' }]);
    });
  });

  test('an empty page commits its state; a dataset gets its table with its first rows or once its load completes', async () => {
    const path = newFile();
    await withSink({ path }, async (sink) => {
      const ds = dataset('D05', 'key', 'created_at');
      assert.equal(await sink.open(ds), undefined);
      await sink.commit({ dataset: ds, rows: [], state: state('D05', null, true) });
      assert.deepEqual(await sink.query(`SELECT table_name FROM duckdb_tables() WHERE table_name = 'd05'`), [], 'no table for an unfinished load without rows');
      assert.notEqual(await sink.open(ds), undefined, 'the state was committed');
      await sink.commit({ dataset: ds, rows: [], state: state('D05', null) });
      const columns = await sink.query(`SELECT column_name AS c FROM duckdb_columns() WHERE table_name = 'd05'`);
      assert.deepEqual(columns.map((r) => r.c), ['public_id', 'created_at', MISMATCH_COLUMN]);
    });
  });

  test('query() gives a column named __proto__ or toString as a field of its row', async () => {
    await withSink({ path: newFile() }, async (sink) => {
      const ds = dataset('D47');
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [JSON.parse('{"public_id":"a","updated_at":"2025-01-01T00:00:00Z","__proto__":1,"toString":2}') as ExportRow], state: state('D47', 'one') });
      const [row] = await sink.query('SELECT "__proto__", "toString", public_id FROM d47');
      assert.deepEqual(Object.entries(row!), [['__proto__', 1n], ['toString', 2n], ['public_id', 'a']]);
      assert.equal(Object.getPrototypeOf(row), Object.prototype);
    });
  });

  test('a date its month does not have is text, not an instant: the pages go in, the value kept', async () => {
    await withSink({ path: newFile() }, async (sink) => {
      const ds = dataset('D09');
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [{ public_id: 'a', updated_at: '2024-02-29T00:00:00Z', due: '2023-02-29T00:00:00Z' }], state: state('D09', 'one') });
      // In the cursor's column (an instant): kept in _mismatched.
      await sink.commit({ dataset: ds, rows: [{ public_id: 'b', updated_at: '2023-02-29T00:00:00Z', due: '2024-04-31T00:00:00Z' }], state: state('D09', 'two') });
      assert.deepEqual(await sink.query(`SELECT column_name AS c, data_type AS t FROM duckdb_columns() WHERE table_name = 'd09' ORDER BY column_index`),
        [{ c: 'public_id', t: 'VARCHAR' }, { c: 'updated_at', t: 'TIMESTAMP WITH TIME ZONE' }, { c: 'due', t: 'VARCHAR' }, { c: MISMATCH_COLUMN, t: 'JSON' }]);
      assert.deepEqual(await sink.query(`SELECT public_id, due, CAST(${MISMATCH_COLUMN} AS VARCHAR) AS m FROM d09 ORDER BY 1`), [
        { public_id: 'a', due: '2023-02-29T00:00:00Z', m: null },
        { public_id: 'b', due: '2024-04-31T00:00:00Z', m: '{"updated_at":"2023-02-29T00:00:00Z"}' },
      ]);
    });
  });

  test('a failed commit writes nothing, and the next page goes in', async () => {
    await withSink({ path: newFile() }, async (sink) => {
      const ds = dataset('D08');
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [{ public_id: 'a', updated_at: '2025-01-01T00:00:00.000Z', amount: 1 }], state: state('D08', 'one') });
      // A row without a public_id cannot be stored by identity.
      await assert.rejects(sink.commit({ dataset: ds, rows: [{ public_id: 'b', updated_at: '2025-01-01T00:00:00.000Z' }, { updated_at: '2025-01-01T00:00:00.000Z' }], state: state('D08', 'two') }),
        (e: unknown) => e instanceof SinkError && /no public_id/.test(e.message));
      // A constraint added by hand makes DuckDB refuse the page's row: the page, its new column
      // and its state are rolled back together, however often it happens.
      await sink.query('ALTER TABLE d08 ALTER COLUMN amount SET NOT NULL');
      for (let attempt = 0; attempt < 2; attempt += 1) {
        await assert.rejects(sink.commit({ dataset: ds, rows: [{ public_id: 'c', updated_at: '2025-01-01T00:00:00.000Z', amount: null, extra: true }], state: state('D08', 'three') }),
          (e: unknown) => e instanceof SinkError && /D08 .*NOT NULL/.test(e.message) && !/\n/.test(e.message));
      }
      await sink.query('ALTER TABLE d08 ALTER COLUMN amount DROP NOT NULL');
      assert.equal((await sink.open(ds))?.highWater?.value, 'one');
      assert.deepEqual(await sink.query(`SELECT public_id FROM d08`), [{ public_id: 'a' }]);
      assert.deepEqual((await sink.query(`SELECT column_name AS c FROM duckdb_columns() WHERE table_name = 'd08'`)).map((r) => r.c), ['public_id', 'updated_at', 'amount', MISMATCH_COLUMN]);
      await sink.commit({ dataset: ds, rows: [{ public_id: 'd', updated_at: '2025-01-01T00:00:00.000Z', extra: true }], state: state('D08', 'four') });
      assert.deepEqual(await sink.query(`SELECT public_id, extra FROM d08 ORDER BY 1`), [{ public_id: 'a', extra: null }, { public_id: 'd', extra: true }]);
      assert.equal((await sink.open(ds))?.highWater?.value, 'four');
    });
  });
});

/** A row of a dataset of 100 fields (text, integers, instants): version 2 of a row has newer values. */
function wideRow(n: number, version: number): Record<string, unknown> {
  const row: Record<string, unknown> = { public_id: `W${n}`, updated_at: new Date(Date.UTC(2025, 0, 1) + n * 1000 + version * 86_400_000).toISOString() };
  for (let k = 0; k < 98; k += 1) {
    row[`f${k}`] = k % 3 === 0 ? `text ${(n * (k + 1)) % 977} v${version}` : k % 3 === 1 ? n * k + version : new Date(Date.UTC(2020, 0, 1) + n * 7000 + version).toISOString();
  }
  return row;
}

describe('wide tables', () => {
  test('a table of 100 columns: pages of 3,000 rows commit and merge, a crash leaves its log, and opening the file again replays it', async () => {
    // DuckDB commits and checkpoints a table with blocks of each of its columns pinned at once:
    // under a memory limit fit for narrow tables, these pages fail, and so does replaying them.
    const path = newFile();
    const script = `const { duckdbSink } = await import(${JSON.stringify(SINK_MODULE)});
      ${wideRow.toString()}
      const ds = ${JSON.stringify(dataset('D99'))};
      const sink = duckdbSink({ path: ${JSON.stringify(path)} });
      await sink.open(ds);
      const page = (from, version) => Array.from({ length: 3000 }, (_, i) => wideRow(from + i, version));
      for (const [rows, value] of [[page(0, 1), 'one'], [page(3000, 1), 'two'], [page(0, 2), 'three']]) {
        await sink.commit({ dataset: ds, rows, state: { version: 1, dataset: 'D99', highWater: { value, ids: [] }, load: null } });
      }
      process.stdout.write('committed\\n');
      process.kill(process.pid, 'SIGKILL');`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(child.stdout, 'committed\n', child.stderr);
    assert.equal(child.signal, 'SIGKILL');
    assert.ok(statSync(`${path}.wal`).size > 0, 'the crash left the log to replay');

    await withSink({ path }, async (sink) => {
      const ds = dataset('D99');
      assert.equal((await sink.open(ds))?.highWater?.value, 'three');
      const columns = await sink.query(`SELECT column_name AS c FROM duckdb_columns() WHERE table_name = 'd99'`);
      assert.equal(columns.length, 101, 'the 100 fields and _mismatched');
      assert.deepEqual(await sink.query('SELECT count(*) AS n, count(DISTINCT public_id) AS ids FROM d99'), [{ n: 6000n, ids: 6000n }]);
      // The third page merged: its rows replaced the first page's, every field of them.
      for (const n of [0, 2999, 3000, 5999]) {
        const [stored] = await sink.query(`SELECT * EXCLUDE (${MISMATCH_COLUMN}) FROM d99 WHERE public_id = 'W${n}'`);
        const expected = wideRow(n, n < 3000 ? 2 : 1);
        assert.deepEqual(Object.keys(stored!), Object.keys(expected));
        for (const [name, value] of Object.entries(expected)) {
          const got = stored![name];
          assert.equal(got instanceof Date ? got.toISOString() : typeof got === 'bigint' ? Number(got) : got, value, `W${n}.${name}`);
        }
      }
      // More pages go in, and the file checkpoints.
      await sink.commit({ dataset: ds, rows: Array.from({ length: 3000 }, (_, i) => wideRow(6000 + i, 1)), state: state('D99', 'four') });
      await sink.query('CHECKPOINT');
      assert.deepEqual(await sink.query('SELECT count(*) AS n FROM d99'), [{ n: 9000n }]);
    });
  });
});

describe('large values', () => {
  test('pages of 1,000 rows of 20 kB of text, appended and merged, go in with the memory they need, and survive a checkpoint and a reopen', async () => {
    // DuckDB holds such pages in memory as it commits them: in 32 MB, the second failed.
    const rng = new Rng(7);
    const text = (length: number): string => {
      let s = '';
      while (s.length < length) s += rng.next().toString(36).slice(2);
      return s.slice(0, length);
    };
    const path = newFile();
    const ds = dataset('D42');
    const written = new Map<string, ExportRow>();
    await withSink({ path }, async (sink) => {
      await sink.open(ds);
      // The last page has the first page's identities, a day newer: merged.
      for (const [page, from] of [[0, 0], [1, 1000], [2, 0]] as const) {
        const rows = Array.from({ length: 1000 }, (_, i) => ({
          public_id: `p${from + i}`, updated_at: new Date(Date.UTC(2025, 0, 1 + page)).toISOString(), note: text(20_000),
        }));
        for (const row of rows) written.set(row.public_id, row);
        await sink.commit({ dataset: ds, rows, state: state('D42', String(page)) });
      }
      const [{ limit }] = await sink.query("SELECT current_setting('memory_limit') AS limit") as [{ limit: string }];
      assert.match(limit, /^\d+(\.\d+)? MiB$/);
      assert.ok(Number.parseFloat(limit) > 32, `the memory limit was raised: ${limit}`);
      await sink.query('CHECKPOINT');
    });
    const again = duckdbSink({ path });
    try {
      assert.equal((await again.open(ds))?.highWater?.value, '2');
      // Digests: 40 MB of text is more than a query through the sink holds at first.
      const stored = await again.query('SELECT public_id, updated_at, md5(note) AS note FROM d42');
      assert.equal(stored.length, 2000);
      for (const row of stored) {
        const expected = written.get(row.public_id as string)!;
        assert.equal((row.updated_at as Date).toISOString(), expected.updated_at, `${row.public_id as string}: its latest version`);
        assert.equal(row.note, createHash('md5').update(expected.note as string).digest('hex'));
      }
    } finally {
      await again.close();
    }
  });
});

describe('one row per identity, without an index', () => {
  const at = (day: number) => `2025-01-${String(day).padStart(2, '0')}T00:00:00.000Z`;
  const row = (id: string, day: number | null, amount: number): ExportRow => ({ public_id: id, ...(day === null ? {} : { updated_at: at(day) }), amount });
  const keys = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `k${from + i}`);

  async function amounts(sink: DuckDbSink, table = 'd07'): Promise<Map<string, number>> {
    const rows = await sink.query(`SELECT public_id AS id, amount FROM ${table}`);
    return new Map(rows.map((r) => [r.id as string, Number(r.amount)]));
  }

  test('rows of stored identities are merged, never appended: a page repeating an earlier page, an incremental page, after the sink is reopened', async () => {
    const path = newFile();
    const ds = dataset('D07');
    const first = duckdbSink({ path });
    try {
      await first.open(ds);
      await first.commit({ dataset: ds, rows: keys(0, 100).map((k) => row(k, 10, 1)), state: state('D07', 'p1', true) });
      // A page of the same load repeating 50 identities (newer), one older version (k0), one
      // identity twice (the later wins), and 50 new ones.
      const second = [...keys(50, 150).map((k) => row(k, 11, 2)), row('k0', 9, 99), row('k149', 11, 3)];
      await first.commit({ dataset: ds, rows: second, state: state('D07', 'p2', true) });
      await assertUnique(first, 'd07', 'public_id');
      const got = await amounts(first);
      assert.equal(got.size, 150);
      assert.equal(got.get('k0'), 1, 'an older version does not replace a newer one');
      assert.equal(got.get('k1'), 1);
      assert.equal(got.get('k50'), 2);
      assert.equal(got.get('k120'), 2);
      assert.equal(got.get('k149'), 3, 'the later occurrence in a page wins');
    } finally {
      await first.close();
    }
    assert.equal(existsSync(`${path}.tmp`), false, 'the temporary folder is removed with nothing in it');

    // Another run: the identities are read back from the table.
    const again = duckdbSink({ path });
    try {
      assert.equal((await again.open(ds))?.highWater?.value, 'p2');
      await again.commit({ dataset: ds, rows: keys(100, 200).map((k) => row(k, 12, 4)), state: state('D07', 'p3') });
      // A commit of 10,000 rows (sync() groups pages when the sink is slower than the export):
      // 200 stored identities, the rest new.
      await again.commit({ dataset: ds, rows: keys(0, 10_000).map((k) => row(k, 13, 5)), state: state('D07', 'p4') });
      await assertUnique(again, 'd07', 'public_id');
      const got = await amounts(again);
      assert.equal(got.size, 10_000);
      assert.deepEqual(new Set(got.values()), new Set([5]));
      // Equal cursor values: the page's version replaces the stored one.
      await again.commit({ dataset: ds, rows: [row('k7', 13, 6)], state: state('D07', 'p5') });
      assert.equal((await amounts(again)).get('k7'), 6);
    } finally {
      await again.close();
    }
  });

  test('a lone surrogate (a text cut inside an emoji) is stored as U+FFFD: ids stored alike are one identity, in a page, across pages and after a reopen', async () => {
    const path = newFile();
    const ds = dataset('D46');
    const mark = (value: string, ids: string[]): DatasetState => ({ ...state('D46', value), highWater: { value, ids } });
    const first = duckdbSink({ path });
    try {
      await first.open(ds);
      await first.commit({ dataset: ds, rows: [
        { public_id: 'x\ud83d', updated_at: '2025-01-01T00:00:01Z', v: 'one', j: { 'k\ud83d': ['a\udc00'] } },
        { public_id: 'x\ud83e', updated_at: '2025-01-01T00:00:02Z', v: 'two', j: null },
        { public_id: 'y', updated_at: '2025-01-01T00:00:02Z', v: 'y\ud83d', j: { k: 'b\ud83d' } },
      ], state: mark('2025-01-01T00:00:02Z', ['x\ud83e', 'y']) });
      await first.commit({ dataset: ds, rows: [{ public_id: 'x\udc00', updated_at: '2025-01-01T00:00:00Z', v: 'older' }], state: mark('2025-01-01T00:00:02Z', ['x\ud83e', 'y']) });
    } finally {
      await first.close();
    }
    const second = duckdbSink({ path });
    try {
      assert.deepEqual((await second.open(ds))?.highWater, { value: '2025-01-01T00:00:02Z', ids: ['x\ufffd', 'y'] });
      await second.commit({ dataset: ds, rows: [{ public_id: 'x\ud83d', updated_at: '2025-01-01T00:00:03Z', v: 'three' }], state: mark('2025-01-01T00:00:03Z', ['x\ud83d']) });
      const rows = await second.query(`SELECT public_id, v, CAST(j AS VARCHAR) AS j FROM d46 ORDER BY 1`);
      assert.deepEqual(rows.map((r) => ({ ...r, j: r.j === null ? null : JSON.parse(r.j as string) as unknown })), [
        { public_id: 'x\ufffd', v: 'three', j: null },
        { public_id: 'y', v: 'y\ufffd', j: { k: 'b\ufffd' } },
      ]);
    } finally {
      await second.close();
    }
  });

  test('identities of any text are read back from the table: digits, colons, accents, emoji, empty-looking', async () => {
    const path = newFile();
    const ds = dataset('D07');
    const ids = ['12:34', '3:abc', ':', 'x'.repeat(300), 'ünïcødé', 'emoji-😀', '日本', ' ', 'a\nb', "o'q"];
    const first = duckdbSink({ path });
    try {
      await first.open(ds);
      await first.commit({ dataset: ds, rows: [...ids.map((id) => row(id, 1, 1)), ...keys(0, 5).map((k) => row(k, 1, 1))], state: state('D07', '1') });
    } finally {
      await first.close();
    }
    const again = duckdbSink({ path });
    try {
      await again.open(ds);
      await again.commit({ dataset: ds, rows: [...ids, 'k0'].map((id) => row(id, 2, 2)), state: state('D07', '2') });
      await assertUnique(again, 'd07', 'public_id');
      const got = await amounts(again);
      assert.equal(got.size, ids.length + 5);
      for (const id of [...ids, 'k0']) assert.equal(got.get(id), 2, id);
    } finally {
      await again.close();
    }
  });

  test('a field named rowid (which hides DuckDB\'s rowid) changes nothing', async () => {
    const path = newFile();
    const ds = dataset('D13');
    const withRowid = (id: string, day: number, amount: number): ExportRow => ({ ...row(id, day, amount), rowid: 0, ROWID_: 1 });
    const first = duckdbSink({ path });
    try {
      await first.open(ds);
      await first.commit({ dataset: ds, rows: keys(0, 20).map((k) => withRowid(k, 1, 1)), state: state('D13', '1') });
      await first.commit({ dataset: ds, rows: [...keys(10, 30).map((k) => withRowid(k, 2, 2)), withRowid('k0', 0, 9)], state: state('D13', '2') });
    } finally {
      await first.close();
    }
    const again = duckdbSink({ path });
    try {
      await again.open(ds);
      await again.commit({ dataset: ds, rows: keys(25, 35).map((k) => withRowid(k, 3, 3)), state: state('D13', '3') });
      await assertUnique(again, 'd13', 'public_id');
      const got = await amounts(again, 'd13');
      assert.equal(got.size, 35);
      assert.deepEqual([got.get('k0'), got.get('k10'), got.get('k29'), got.get('k34')], [1, 2, 3, 3]);
    } finally {
      await again.close();
    }
  });

  test('a NULL cursor: a stored row without one is replaced by any version, a version without one replaces only such a row', async () => {
    await withSink({ path: newFile() }, async (sink) => {
      const ds = dataset('D07');
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [row('a', null, 1), row('b', 5, 1), row('c', null, 1)], state: state('D07', '1') });
      await sink.commit({ dataset: ds, rows: [row('a', 1, 2), row('b', null, 2), row('c', null, 2)], state: state('D07', '2') });
      assert.deepEqual(Object.fromEntries(await amounts(sink)), { a: 2, b: 1, c: 2 });
      await assertUnique(sink, 'd07', 'public_id');
    });
  });

  test('rows written through query() are seen by the next commit; a failed commit leaves no identity behind', async () => {
    await withSink({ path: newFile() }, async (sink) => {
      const ds = dataset('D07');
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [row('a', 1, 1)], state: state('D07', '1') });
      await sink.query(`INSERT INTO d07 (public_id, updated_at, amount) VALUES ('by-hand', '${at(1)}', 1)`);
      await sink.commit({ dataset: ds, rows: [row('by-hand', 2, 2)], state: state('D07', '2') });
      // A page DuckDB refuses (a constraint added by hand) rolls back; its identities were never stored.
      await sink.query('ALTER TABLE d07 ALTER COLUMN amount SET NOT NULL');
      await assert.rejects(sink.commit({ dataset: ds, rows: [row('a', 3, 3), { ...row('new', 3, 3), amount: null }], state: state('D07', 'x') }), SinkError);
      await sink.commit({ dataset: ds, rows: [row('new', 4, 4)], state: state('D07', '3') });
      assert.deepEqual(Object.fromEntries(await amounts(sink)), { 'a': 1, 'by-hand': 2, 'new': 4 });
      await assertUnique(sink, 'd07', 'public_id');
    });
  });

  test('tables made by hand: without a primary key, with one (an earlier version of the sink), with a key that is not text', async () => {
    const path = newFile();
    await mkdir(dirname(path), { recursive: true });
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const raw = await DuckDBInstance.create(path);
    const conn = await raw.connect();
    await conn.run(`CREATE TABLE d10 (public_id VARCHAR, updated_at TIMESTAMPTZ, amount BIGINT);
      CREATE TABLE d11 (public_id VARCHAR PRIMARY KEY, updated_at TIMESTAMPTZ, amount BIGINT);
      CREATE TABLE d12 (public_id UUID, updated_at TIMESTAMPTZ, amount BIGINT);
      INSERT INTO d10 VALUES ('a', '${at(1)}', 1); INSERT INTO d11 VALUES ('a', '${at(1)}', 1);
      INSERT INTO d12 VALUES ('00000000-0000-0000-0000-00000000000a', '${at(1)}', 1)`);
    conn.closeSync();
    raw.closeSync();
    await withSink({ path }, async (sink) => {
      for (const [code, stored] of [['D10', 'a'], ['D11', 'a'], ['D12', '00000000-0000-0000-0000-00000000000a']] as const) {
        const ds = dataset(code);
        await sink.open(ds);
        await sink.commit({ dataset: ds, rows: [row(stored, 2, 2)], state: state(code, '1') });
        await sink.commit({ dataset: ds, rows: [row(stored, 1, 3), row('00000000-0000-0000-0000-00000000000b', 2, 2)], state: state(code, '2') });
        const got = await sink.query(`SELECT CAST(public_id AS VARCHAR) AS id, amount FROM ${code.toLowerCase()} ORDER BY 1`);
        assert.deepEqual(got.map((r) => `${r.id}=${r.amount}`), [`${stored}=2`, '00000000-0000-0000-0000-00000000000b=2'].sort(), code);
      }
    });
  });
});

describe('the identities in memory', () => {
  test('a key set never misses a key it was given, through its growth', () => {
    const set = new KeySet();
    const added: string[] = [];
    for (let i = 0; i < 50_000; i += 1) {
      const key = i % 3 === 0 ? `k${i}` : `${i}-${(i * 2654435761) >>> 0}-ü`;
      assert.equal(set.has(key), false, key);
      set.add(key);
      added.push(key);
    }
    set.add('k0');
    assert.equal(set.size, 50_000);
    for (const key of added) assert.ok(set.has(key), key);
    let falsePositives = 0;
    for (let i = 0; i < 50_000; i += 1) if (set.has(`absent-${i}`)) falsePositives += 1;
    assert.equal(falsePositives, 0);
    fc.assert(fc.property(fc.uniqueArray(fc.string({ unit: 'binary' }), { maxLength: 2000 }), (keys) => {
      const s = new KeySet();
      for (const k of keys) s.add(k);
      return keys.every((k) => s.has(k)) && s.size === keys.length;
    }), { numRuns: 50 });
  });

  test('a million keys take some 12 bytes each: the set grows by half, not double', () => {
    const set = new KeySet();
    for (let i = 0; i < 1_000_000; i += 1) set.add(`P-${i}`);
    assert.equal(set.size, 1_000_000);
    // Doubling, a million keys sat in 2^21 slots of 8 bytes: 16.8 MB.
    assert.ok(set.bytes < 13_000_000, `${set.bytes} bytes`);
    assert.ok(set.bytes > 1_000_000 * 8 / 0.75, 'at most three quarters full');
    assert.ok(set.has('P-999999') && !set.has('P-1000000'));
  });
});

describe('schema evolution', () => {
  test('a table made with fewer columns gets the new fields as columns, each told once; misfit values are kept in _mismatched', async () => {
    const path = newFile();
    const ds = dataset('D09');
    // A table from an earlier version: the key and the cursor only, no _mismatched.
    const first = duckdbSink({ path });
    await first.open(ds);
    await first.commit({ dataset: ds, rows: [], state: state('D09', null) });
    await first.query('SELECT 1');
    await first.close();
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const raw = await DuckDBInstance.create(path);
    const conn = await raw.connect();
    await conn.run(`ALTER TABLE d09 DROP COLUMN ${MISMATCH_COLUMN}`);
    conn.closeSync();
    raw.closeSync();

    const notices: SinkNotice[] = [];
    await withSink({ path, onNotice: (n) => notices.push(n) }, async (sink) => {
      await sink.open(ds);
      const at = '2025-02-01T00:00:00.000Z';
      await sink.commit({ dataset: ds, rows: [{ public_id: 'a', updated_at: at, amount: 10, plan: { n: 1 } }], state: state('D09', '1') });
      await sink.commit({ dataset: ds, rows: [{ public_id: 'b', updated_at: at, amount: 'ten', plan: null, note: 'x' }], state: state('D09', '2') });
      await sink.commit({ dataset: ds, rows: [{ public_id: 'c', updated_at: at, amount: 'eleven', note: 12 }], state: state('D09', '3') });
      const columns = await sink.query(`SELECT column_name AS c, data_type AS t FROM duckdb_columns() WHERE table_name = 'd09'`);
      assert.deepEqual(columns.map((r) => `${r.c} ${r.t}`), [
        'public_id VARCHAR', 'updated_at TIMESTAMP WITH TIME ZONE', 'amount BIGINT', 'plan JSON', MISMATCH_COLUMN + ' JSON', 'note VARCHAR',
      ]);
      const rows = await sink.query(`SELECT public_id, amount, CAST(plan AS VARCHAR) AS plan, note, CAST(${MISMATCH_COLUMN} AS VARCHAR) AS m FROM d09 ORDER BY 1`);
      assert.deepEqual(rows, [
        { public_id: 'a', amount: 10n, plan: '{"n":1}', note: null, m: null },
        { public_id: 'b', amount: null, plan: null, note: 'x', m: '{"amount":"ten"}' },
        { public_id: 'c', amount: null, plan: null, note: null, m: '{"amount":"eleven","note":12}' },
      ]);
      assert.deepEqual(notices.map((n) => `${n.dataset} ${n.kind} ${n.message}`), [
        'D09 column-added d09: new column amount (bigint)',
        'D09 column-added d09: new column plan (json)',
        'D09 column-added d09: new column note (text)',
        'D09 type-changed d09: amount had a text value in a bigint column; such values are kept in _mismatched',
        'D09 type-changed d09: note had a bigint value in a text column; such values are kept in _mismatched',
      ]);
    });

    // Another run reads the columns back from the file: nothing new to tell.
    const again: SinkNotice[] = [];
    const next = duckdbSink({ path, onNotice: (n) => again.push(n) });
    try {
      await next.open(ds);
      await next.commit({ dataset: ds, rows: [{ public_id: 'a', updated_at: '2025-03-01T00:00:00.000Z', amount: 12, note: 'y' }], state: state('D09', '4') });
      assert.deepEqual(again, []);
      assert.deepEqual(await next.query(`SELECT amount, note FROM d09 WHERE public_id = 'a'`), [{ amount: 12n, note: 'y' }]);
    } finally {
      await next.close();
    }
  });
});

describe('fields DuckDB cannot give a column', () => {
  test('a field named like a column but for case (Amount beside amount, _Mismatched), empty or with a NUL keeps its values in _mismatched, told once a run; every page goes in, both the appended and the merged', async () => {
    const path = newFile();
    const ds = dataset('D09');
    const at = (d: number) => `2025-02-0${d}T00:00:00.000Z`;
    const notices: SinkNotice[] = [];
    await withSink({ path, onNotice: (n) => notices.push(n) }, async (sink) => {
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [{ public_id: 'a', updated_at: at(1), amount: 10 }], state: state('D09', '1') });
      await sink.commit({ dataset: ds, rows: [{ public_id: 'b', updated_at: at(1), amount: 20, Amount: 21, _Mismatched: 'x', '': 'e', 'a\u0000b': 1 }], state: state('D09', '2') });
      // 'a' again (merged: a stored identity) and 'c' (appended), both with the clashing field.
      await sink.commit({
        dataset: ds, rows: [{ public_id: 'a', updated_at: at(2), amount: 11, Amount: { v: 1 } }, { public_id: 'c', updated_at: at(2), AMOUNT: 'thirty' }],
        state: state('D09', '3'),
      });
      const rows = await sink.query(`SELECT public_id, amount, CAST(${MISMATCH_COLUMN} AS VARCHAR) AS m FROM d09 ORDER BY 1`);
      assert.deepEqual(rows.map((r) => ({ ...r, m: r.m === null ? null : JSON.parse(r.m as string) as unknown })), [
        { public_id: 'a', amount: 11n, m: { Amount: { v: 1 } } },
        { public_id: 'b', amount: 20n, m: { Amount: 21, _Mismatched: 'x', '': 'e', 'a\u0000b': 1 } },
        { public_id: 'c', amount: null, m: { AMOUNT: 'thirty' } },
      ]);
      const columns = await sink.query(`SELECT column_name AS c FROM duckdb_columns() WHERE table_name = 'd09'`);
      assert.deepEqual(columns.map((r) => r.c), ['public_id', 'updated_at', 'amount', MISMATCH_COLUMN]);
      assert.deepEqual(notices.filter((n) => n.kind === 'no-column').map((n) => n.message), [
        'd09: Amount gets no column (DuckDB compares column names without case, and the column amount has this one); its values are kept in _mismatched',
        `d09: _Mismatched gets no column (DuckDB compares column names without case, and the column ${MISMATCH_COLUMN} has this one); its values are kept in _mismatched`,
        'd09:  gets no column (an empty name); its values are kept in _mismatched',
        'd09: a\u0000b gets no column (a NUL in the name); its values are kept in _mismatched',
        'd09: AMOUNT gets no column (DuckDB compares column names without case, and the column amount has this one); its values are kept in _mismatched',
      ]);
    });
    // The next run reads the table back and goes on.
    const again: SinkNotice[] = [];
    const next = duckdbSink({ path, onNotice: (n) => again.push(n) });
    try {
      await next.open(ds);
      await next.commit({ dataset: ds, rows: [{ public_id: 'd', updated_at: at(3), amount: 40, Amount: 41 }], state: state('D09', '4') });
      assert.deepEqual(await next.query(`SELECT amount, CAST(${MISMATCH_COLUMN} AS VARCHAR) AS m FROM d09 WHERE public_id = 'd'`), [{ amount: 40n, m: '{"Amount":41}' }]);
      assert.deepEqual(again.map((n) => n.kind), ['no-column']);
    } finally {
      await next.close();
    }
  });
});

// ---------------------------------------------------------------- one writer per file

describe('lock', () => {
  test('a second sink on the file is refused while the first holds it; holds nest; close() waits for the last', async () => {
    const path = newFile();
    const one = duckdbSink({ path });
    const two = duckdbSink({ path });
    const outer = await one.lock();
    const inner = await one.lock();
    const refused = (e: unknown) => e instanceof DuckDbLockedError && !e.message.includes('\n') && e.message === `${path} is already open in this process ` +
      '(a sync or query still running, or a DuckDB sink not closed); wait for it to end, or close that sink, before opening the file again.';
    await assert.rejects(two.lock(), refused);
    await one.close();
    await one.close();
    await inner.release();
    await inner.release();
    await assert.rejects(two.open(dataset('D07')), refused, 'still held by the outer hold');
    await outer.release();
    const hold = await two.lock();
    await hold.release();
    await two.close();
  });

  test('a sink of another process holding the file: a one-line DuckDbLockedError naming the file and that process', async () => {
    const path = newFile();
    const script = `const { duckdbSink } = await import(${JSON.stringify(SINK_MODULE)});
      await duckdbSink({ path: ${JSON.stringify(path)} }).lock();
      process.stdout.write('held\\n');
      setInterval(() => undefined, 60000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = await once(createInterface({ input: child.stdout! }), 'line') as [string];
      assert.equal(line, 'held');
      const sink = duckdbSink({ path });
      const error = await sink.lock().then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof DuckDbLockedError, String(error));
      assert.ok(error instanceof SinkError);
      assert.equal(error.message, `${path} is open in another process (pid ${child.pid}): a DuckDB file has one writer at a time; ` +
        'wait for that run to end, or sync into another file.');
      assert.deepEqual(error.holder, { thisProcess: false, pid: child.pid });
      // sync() is refused before anything is written.
      await assert.rejects(sync({} as never, ['D07'], { to: sink }), DuckDbLockedError);
    } finally {
      child.kill();
      await once(child, 'exit');
    }
    // Once that process is gone, the file opens.
    const sink = duckdbSink({ path });
    await (await sink.lock()).release();
    await sink.close();
  });
});

// ---------------------------------------------------------------- reopening

describe('queries', () => {
  // Hours on one thread: it ends only when stopped.
  const ENDLESS = 'SELECT count(*) AS n FROM range(1000000000000)';

  test('close() stops a query still running, at once or after it started: the query fails with a SinkError, close() ends', async () => {
    for (const waitMs of [0, 200]) {
      const path = newFile();
      const sink = duckdbSink({ path });
      const query = sink.query(ENDLESS).then(() => undefined, (error: unknown) => error);
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      await sink.close();
      const error = await query;
      assert.ok(error instanceof SinkError, String(error));
      assert.equal(error.message, `The query on ${path} was stopped: the sink was closed while it ran.`);
      assert.deepEqual(readdirSync(dirname(path)), ['lender.duckdb'], 'closed: no log or temporary folder left');
    }
  });

  test('a sink that opens the file while another sink of this process is closing it, before that one has even opened it, waits for that close', async () => {
    for (let round = 0; round < 5; round += 1) {
      const path = newFile();
      const first = duckdbSink({ path });
      const query = first.query('SELECT 1 AS one').then(() => undefined, (error: unknown) => error);
      // The first sink holds the file's claim once its run lock is made, before DuckDB has
      // opened the file (which takes some milliseconds more).
      while (!existsSync(`${path}.lock`)) await new Promise((resolve) => setImmediate(resolve));
      const closing = first.close();
      const second = duckdbSink({ path });
      try {
        assert.deepEqual(await second.query('SELECT 42 AS answer'), [{ answer: 42 }]);
        const outcome = await query;
        assert.ok(outcome === undefined || outcome instanceof SinkError, String(outcome));
        await closing;
      } finally {
        await second.close();
      }
    }
  });

  test('a sink that opens the file while another sink of this process is closing it waits for that close', async () => {
    // What the REPL does after Ctrl-C stopped sql(): the stopped call's sink is still closing
    // when the next call opens the file.
    const path = newFile();
    const first = duckdbSink({ path });
    const query = first.query(ENDLESS).then(() => undefined, (error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = first.close();
    const second = duckdbSink({ path });
    try {
      assert.deepEqual(await second.query('SELECT 42 AS answer'), [{ answer: 42 }]);
      assert.ok(await query instanceof SinkError);
      await closing;
    } finally {
      await second.close();
    }
  });

  test('a query stopped by its signal fails with an AbortError, however soon; the sink answers the next one', async () => {
    await withSink({ path: newFile() }, async (sink) => {
      const stopped = new AbortController();
      stopped.abort(new Error('never mind'));
      await assert.rejects(sink.query(ENDLESS, { signal: stopped.signal }), { name: 'AbortError' });
      for (const waitMs of [0, 200]) {
        const stop = new AbortController();
        const query = sink.query(ENDLESS, { signal: stop.signal });
        if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
        stop.abort(new Error('Ctrl-C'));
        await assert.rejects(query, (error: unknown) => error instanceof Error && error.name === 'AbortError' &&
          (error.cause as Error | undefined)?.message === 'Ctrl-C');
      }
      assert.deepEqual(await sink.query('SELECT 42 AS answer'), [{ answer: 42 }]);
    });
  });
});

describe('reopening DuckDB during a load, to give back its memory', () => {
  /** Counts DuckDB's opens of files in this process (the sink's own, queries included). */
  async function countingOpens<T>(use: (opens: () => number) => Promise<T>): Promise<T> {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const create = DuckDBInstance.create;
    let opens = 0;
    DuckDBInstance.create = function (this: unknown, ...args: Parameters<typeof create>) {
      opens += 1;
      return create.apply(this, args);
    } as typeof create;
    try {
      return await use(() => opens);
    } finally {
      DuckDBInstance.create = create;
    }
  }

  test('a sync of more rows than reopenAfterRows stores the reference walk', async () => {
    // Pages 40 ms apart, so that most commits hold one page (a group commit waits 25 ms for more).
    const f = await fixture({ seed: 43, scale: 300, latencyMs: 40 });
    const path = newFile();
    try {
      const reference = await plainWalk(f.client, 'D07', EVERYTHING);
      assert.ok(reference.length > 200, `D07 has ${reference.length} rows`);
      const sink = duckdbSink({ path, reopenAfterRows: 40 });
      const opens = await countingOpens(async (opens) => {
        await sync(f.client, ['D07'], { to: sink, limit: 20 });
        return opens();
      });
      // One to make the file, one for the load, then one before a commit once 40 rows or more
      // were committed since the last: at most one a page, at least one per 40 rows of the
      // largest commits, which hold 20 rows each unless a busy machine stalled the sink.
      assert.ok(opens > 2, `${opens} opens for ${reference.length} rows`);
      assert.ok(opens <= 2 + Math.ceil(reference.length / 20), `${opens} opens for ${reference.length} rows`);
      assert.deepEqual(await tableRows(sink, 'd07'), referenceRows(reference));
      await assertUnique(sink, 'd07', 'public_id');
      await sink.close();
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.deepEqual(readdirSync(dirname(path)).sort(), ['lender.duckdb'], 'no log, temporary folder or lock left');
    } finally {
      await f.close();
    }
  });

  const ds = dataset('D07');
  const rows = (from: number, n: number, amount = 1) => Array.from({ length: n }, (_, i) => ({ public_id: `k${from + i}`, updated_at: '2025-01-01T00:00:00.000Z', amount: amount + i }));

  test('not by default below 100,000 rows, never with reopenAfterRows 0, nor once a query has run on the sink', async () => {
    const load = async (opts: Omit<DuckDbSinkOptions, 'path'>, queryFirst: boolean): Promise<number> => countingOpens(async (opens) => {
      await withSink({ path: newFile(), ...opts }, async (sink) => {
        await sink.open(ds);
        if (queryFirst) assert.deepEqual(await sink.query('SELECT 1 AS one'), [{ one: 1 }]);
        for (let page = 0; page < 10; page += 1) await sink.commit({ dataset: ds, rows: rows(page * 30, 30), state: state('D07', `p${page}`, true) });
        assert.equal((await sink.query('SELECT count(*) AS n FROM d07'))[0]!.n, 300n);
      });
      return opens();
    });
    // A new file: one instance to make it, one that holds it.
    assert.equal(await load({}, false), 2, 'the default: no reopening for 300 rows');
    assert.equal(await load({ reopenAfterRows: 0 }, false), 2);
    assert.equal(await load({ reopenAfterRows: 30 }, true), 2, 'a sink that answered a query keeps its connection');
    assert.equal(await load({ reopenAfterRows: 30 }, false), 2 + 9, 'before each commit after the first');
    assert.throws(() => duckdbSink({ path: newFile(), reopenAfterRows: -1 }), /reopenAfterRows must be a whole number/);
    assert.throws(() => duckdbSink({ path: newFile(), reopenAfterRows: 1.5 }), /reopenAfterRows must be a whole number/);
  });

  test('collectGarbage: a forced full collection before each checkpoint (reopenings and close), none without; on in openSink', async () => {
    const load = async (sink: Sink): Promise<number> => countForcedGcs(async () => {
      try {
        await sink.open(ds);
        for (let page = 0; page < 10; page += 1) await sink.commit({ dataset: ds, rows: rows(page * 30, 30), state: state('D07', `p${page}`, true) });
      } finally {
        await sink.close();
      }
    });
    assert.equal(await load(duckdbSink({ path: newFile(), reopenAfterRows: 30 })), 0, 'off by default');
    assert.equal(await load(duckdbSink({ path: newFile(), reopenAfterRows: 30, collectGarbage: true })), 9 + 1, 'nine reopenings and the close');
    assert.equal(await load(duckdbSink({ path: newFile(), collectGarbage: true })), 1, 'the close alone');
    const spec = parseSinkSpec(`duckdb:${newFile()}`);
    assert.equal(await load(await openSink(spec, { env: { LENDER_DUCKDB_REOPEN_ROWS: '30' } })), 9 + 1, 'the CLI\'s and the sessions\' sinks');
  });

  /** Runs `use` with reopenHooks.afterClose set to `hook` (and waitMs), restored after. */
  async function withHook(hook: (file: string) => Promise<void>, use: () => Promise<void>, waitMs?: number): Promise<void> {
    const { reopenHooks } = await import('../../src/sinks/duckdb/database.ts');
    reopenHooks.afterClose = hook;
    if (waitMs !== undefined) reopenHooks.waitMs = waitMs;
    try {
      await use();
    } finally {
      delete reopenHooks.afterClose;
      delete reopenHooks.waitMs;
    }
  }

  test('a query asked for while DuckDB is closed waits for the reopening and sees every committed page; the file keeps them all', async () => {
    const path = newFile();
    const sink = duckdbSink({ path, reopenAfterRows: 50 });
    const counts: Promise<Record<string, unknown>[]>[] = [];
    try {
      await sink.open(ds);
      await withHook(async () => {
        // Asked for in the moment the database is closed (the first reopening only: the
        // query's connection then keeps it open).
        if (counts.length === 0) counts.push(sink.query('SELECT count(*) AS n FROM d07'));
      }, async () => {
        for (let page = 0; page < 6; page += 1) await sink.commit({ dataset: ds, rows: rows(page * 50, 50), state: state('D07', `p${page}`, true) });
      });
      assert.equal(counts.length, 1, 'the load reopened the file once, before its query');
      // The reopening was made by the second page's commit, which goes on once the file is open
      // again, as the query does: the query may run before that commit ends or after it.
      const seen = (await counts[0]!)[0]!.n;
      assert.ok(seen === 50n || seen === 100n, `the page committed before the reopening, perhaps the next: ${String(seen)}`);
      assert.equal((await sink.query('SELECT count(*) AS n FROM d07'))[0]!.n, 300n, 'the reader sees the later commits');
    } finally {
      await sink.close();
    }
    const again = duckdbSink({ path });
    try {
      assert.equal((await again.open(ds))?.highWater?.value, 'p5');
      assert.equal((await again.query('SELECT count(*) AS n FROM d07'))[0]!.n, 300n, 'every committed page is in the file');
    } finally {
      await again.close();
    }
  });

  /** A process holding the file with DuckDB itself (not this library) until told to let go;
   * `sql` runs first, in it. */
  async function foreignHolder(path: string, sql = 'SELECT 1'): Promise<{ pid: number; release(): Promise<void> }> {
    const script = `const { DuckDBInstance } = await import('@duckdb/node-api');
      const instance = await DuckDBInstance.create(${JSON.stringify(path)});
      const connection = await instance.connect();
      await connection.run(${JSON.stringify(sql)});
      process.stdout.write('held\\n');
      process.stdin.once('data', () => { connection.closeSync(); instance.closeSync(); process.exit(0); });`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    const [line] = await once(createInterface({ input: child.stdout! }), 'line') as [string];
    assert.equal(line, 'held');
    return {
      pid: child.pid!,
      async release() {
        if (child.exitCode !== null) return;
        child.stdin!.write('go\n');
        await once(child, 'exit');
      },
    };
  }

  test('another program that takes the file while it is closed is waited for, and what it wrote is read again: an identity it stored is merged, not appended twice', async () => {
    const path = newFile();
    const sink = duckdbSink({ path, reopenAfterRows: 50 });
    let took: Promise<void> | undefined;
    try {
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: rows(0, 50), state: state('D07', 'p0', true) });
      await withHook(async (file) => {
        if (took !== undefined) return;
        // It writes a row of an identity the sink has not seen, and a column, then lets go
        // 300 ms later, while the sink waits to open the file again.
        const holder = await foreignHolder(file, `INSERT INTO d07 (public_id, updated_at, amount) VALUES ('zz-1', '2024-01-01T00:00:00Z', 7); ALTER TABLE d07 ADD COLUMN note VARCHAR`);
        took = new Promise((resolve) => setTimeout(resolve, 300)).then(() => holder.release());
      }, async () => {
        await sink.commit({ dataset: ds, rows: [{ public_id: 'zz-1', updated_at: '2025-01-01T00:00:00.000Z', amount: 8, note: 'newer' }], state: state('D07', 'p1', true) });
      });
      assert.ok(took !== undefined, 'the commit reopened the file');
      await took;
      await assertUnique(sink, 'd07', 'public_id');
      const [row] = await sink.query(`SELECT amount, note FROM d07 WHERE public_id = 'zz-1'`);
      assert.deepEqual(row, { amount: 8n, note: 'newer' }, 'the newer version replaced the other program\'s row');
      assert.equal((await sink.query('SELECT count(*) AS n FROM d07'))[0]!.n, 51n);
    } finally {
      await sink.close();
    }
  });

  test('one that keeps the file: the commit fails with a DuckDbLockedError saying so; what was committed stays; the file opens once it is gone', async () => {
    const path = newFile();
    const sink = duckdbSink({ path, reopenAfterRows: 50 });
    let holder: Awaited<ReturnType<typeof foreignHolder>> | undefined;
    try {
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: rows(0, 50), state: state('D07', 'p0', true) });
      let query: Promise<unknown> | undefined;
      await withHook(async (file) => {
        holder ??= await foreignHolder(file);
        // Asked for while the file is closed: it waits for the reopening, which fails.
        query ??= sink.query('SELECT count(*) AS n FROM d07').then(() => undefined, (e: unknown) => e);
      }, async () => {
        const error = await sink.commit({ dataset: ds, rows: rows(50, 50), state: state('D07', 'p1', true) }).then(() => undefined, (e: unknown) => e);
        const refused = await query;
        assert.ok(refused instanceof SinkError, String(refused));
        assert.equal(refused.message, `DuckDB closed ${path} before the query could run; run it again.`);
        assert.ok(error instanceof DuckDbLockedError, String(error));
        assert.equal(error.message, `${path}: another process (pid ${holder!.pid}) opened it while this run had it closed for a moment to give back ` +
          "DuckDB's memory, and still had it 0.3 s later; the pages committed until then are kept: run again once that process is done.");
        assert.deepEqual(error.holder, { thisProcess: false, pid: holder!.pid });
      }, 300);
      await holder!.release();
      // The sink opens the file again at its next open(); the first page is there, the second not.
      assert.equal((await sink.open(ds))?.highWater?.value, 'p0');
      assert.equal((await sink.query('SELECT count(*) AS n FROM d07'))[0]!.n, 50n);
    } finally {
      await holder?.release();
      await sink.close();
    }
    assert.deepEqual(readdirSync(dirname(path)).sort(), ['lender.duckdb']);
  });

  test('another run of this library that comes while the file is closed is refused at once, by the run\'s lock file', async () => {
    const path = newFile();
    const sink = duckdbSink({ path, reopenAfterRows: 50 });
    let answer: string | undefined;
    try {
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: rows(0, 50), state: state('D07', 'p0', true) });
      await withHook(async (file) => {
        if (answer !== undefined) return;
        assert.equal(statSync(`${file}.lock`).mode & 0o777, 0o600, 'the lock file, held while DuckDB is closed');
        const script = `const { duckdbSink } = await import(${JSON.stringify(SINK_MODULE)});
          const sink = duckdbSink({ path: ${JSON.stringify(file)} });
          const said = await sink.lock().then(() => 'got the file', (e) => e.name + ': ' + e.message);
          await sink.close();
          process.stdout.write(said + '\\n');`;
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
        [answer] = await once(createInterface({ input: child.stdout! }), 'line') as [string];
        await once(child, 'exit');
      }, async () => {
        await sink.commit({ dataset: ds, rows: rows(50, 50), state: state('D07', 'p1', true) });
      });
      assert.equal(answer, `DuckDbLockedError: ${path} is open in another process (pid ${process.pid}): a DuckDB file has one writer at a time; ` +
        'wait for that run to end, or sync into another file.');
      assert.equal((await sink.query('SELECT count(*) AS n FROM d07'))[0]!.n, 100n);
    } finally {
      await sink.close();
    }
    assert.deepEqual(readdirSync(dirname(path)).sort(), ['lender.duckdb'], 'the lock file is gone with the run');
  });

  test('reopen() waits while another program has the file, and names it when it keeps the file', async () => {
    const { reopen } = await import('../../src/sinks/duckdb/database.ts');
    const path = newFile();
    await withSink({ path }, async (sink) => {
      await sink.open(dataset('D07'));
    });
    const holder = await foreignHolder(path);
    try {
      let settled = false;
      const opening = reopen(path, 32, 64, 60_000).finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(settled, false, 'still waiting while the other process has the file');
      await holder.release();
      const { instance, waited } = await opening;
      instance.closeSync();
      assert.equal(waited, true);
    } finally {
      await holder.release();
    }

    const keeper = await foreignHolder(path);
    try {
      const error = await reopen(path, 32, 64, 300).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof DuckDbLockedError, String(error));
      assert.deepEqual(error.holder, { thisProcess: false, pid: keeper.pid });
    } finally {
      await keeper.release();
    }
  });
});

// ---------------------------------------------------------------- no native code on import

describe('loading', () => {
  /** Imports `what` in a fresh process and reports the native addons and @duckdb modules it loaded. */
  function loadedBy(what: string): { native: string[]; duckdb: string[] } {
    const script = `
      const { createRequire } = await import('node:module');
      const native = [];
      const dlopen = process.dlopen;
      process.dlopen = function (module, filename, ...rest) { native.push(filename); return dlopen.call(this, module, filename, ...rest); };
      ${what}
      const cache = Object.keys(createRequire(import.meta.url).cache);
      process.stdout.write(JSON.stringify({ native, duckdb: cache.filter((p) => p.includes('@duckdb')) }));`;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    return JSON.parse(result.stdout) as { native: string[]; duckdb: string[] };
  }

  test('importing the library, or making a DuckDB sink, loads no native code; opening one does', () => {
    assert.deepEqual(loadedBy(`await import('./src/index.ts');`), { native: [], duckdb: [] });
    assert.deepEqual(loadedBy(`const { duckdbSink } = await import('./src/sinks/duckdb-sink.ts'); duckdbSink({ path: 'never-opened.duckdb' });`), { native: [], duckdb: [] });
    // The probe sees a load when there is one.
    const opened = loadedBy(`const { duckdbSink } = await import('./src/sinks/duckdb-sink.ts');
      const sink = duckdbSink({ path: ${JSON.stringify(newFile())} }); await sink.query('SELECT 1'); await sink.close();`);
    assert.ok(opened.native.some((p) => p.includes('@duckdb') && p.endsWith('.node')), JSON.stringify(opened));
    assert.ok(opened.duckdb.some((p) => p.includes('@duckdb/node-api')), JSON.stringify(opened));
  });
});
