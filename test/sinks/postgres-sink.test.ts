// The PostgreSQL sink against a real PostgreSQL cluster (test/helpers/postgres.ts) and the sandbox
// over real HTTPS: sync() equals the reference walk, incremental runs keep each row once in its
// latest version, columns evolve, a commit is all or nothing, passwords never show, and several
// writers share a database. The pure parts (COPY text, the password file, connection settings)
// are tested directly first.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { LenderClient } from '../../src/client/client.ts';
import { ConfigError } from '../../src/core/errors.ts';
import { datasetInfo, type DatasetCode } from '../../src/core/catalog.ts';
import type { ExportRow } from '../../src/core/types.ts';
import { canonicalJson, contentRowKey } from '../../src/exports/highwater.ts';
import type { DatasetState } from '../../src/exports/state.ts';
import { DEFAULT_ORIGIN } from '../../src/exports/windows.ts';
import { fits, initialColumns, isBookkeepingColumn, latestByIdentity, rowValues, TableShape } from '../../src/sinks/columns.ts';
import { SinkError } from '../../src/sinks/errors.ts';
import { postgresSink } from '../../src/sinks/postgres-sink.ts';
import { POSTGRES_NAMING } from '../../src/sinks/postgres/sql.ts';
import { describeConnection, resolveConnection } from '../../src/sinks/postgres/connection.ts';
import { copyField } from '../../src/sinks/postgres/copy-text.ts';
import { dollarQuoted } from '../../src/sinks/postgres/sql.ts';
import { byteOrder, encodePage } from '../../src/sinks/postgres/encode-page.ts';
import { pgpassLookup } from '../../src/sinks/postgres/pgpass.ts';
import { PgStore, type PgTransaction } from '../../src/sinks/postgres/store.ts';
import type { Sink, SinkDataset, SinkNotice } from '../../src/sinks/sink.ts';
import { sync } from '../../src/sinks/sync.ts';
import { SyncError } from '../../src/exports/errors.ts';
import { main } from '../../src/cli/main.ts';
import { fixture, type Fixture } from '../exports/helpers.ts';
import { memoryIo } from '../helpers/memory-io.ts';
import { EVERYTHING, plainWalk } from '../helpers/plain-walk.ts';
import { adminQuery, connectionsTo, createDatabase, startPostgres, type PgCluster, type PgDatabase } from '../helpers/postgres.ts';
import { runSeed } from '../helpers/resilience.ts';

// ---------------------------------------------------------------- pure parts

describe('COPY text', () => {
  test('tabs, newlines, carriage returns and backslashes are escaped; NULL is \\N', () => {
    assert.equal(copyField('a\tb\nc\rd\\e', 'text'), 'a\\tb\\nc\\rd\\\\e');
    assert.equal(copyField(null, 'text'), '\\N');
    assert.equal(copyField('\\N', 'text'), '\\\\N', 'the text \\N is not NULL');
    // JSON escapes first (\t, \", \\), then COPY doubles every backslash.
    assert.equal(copyField({ a: 'x\ty"\\' }, 'json'), String.raw`{"a":"x\\ty\\"\\\\"}`);
    assert.equal(copyField(true, 'boolean'), 't');
    assert.equal(copyField(-12, 'bigint'), '-12');
    assert.throws(() => copyField('a\u0000b', 'text'), /NUL/);
    assert.throws(() => copyField({ a: 'x\u0000' }, 'json'), /NUL/);
    assert.equal(copyField({ a: '\\u0000' }, 'json'), '{"a":"\\\\\\\\u0000"}', 'the letters \\u0000 are not a NUL');
  });

  test('a page encodes to the values of rowValues, one line per identity, its newest version', () => {
    const dataset: SinkDataset = { code: 'D42', section: 'S9', key: 'D42', cursorField: 'updated_at', identity: 'key' };
    // '' and 'x…' cannot be PostgreSQL columns (TableShape.homeless): their values go to _mismatched.
    // toString, constructor and __proto__ are names every object has: a row without them holds no such field.
    const field = fc.constantFrom('a', 'b', 'c', '_mismatched', '_row_key', 'updated_at', '', 'x'.repeat(64), 'toString', 'constructor', '__proto__');
    const value = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true }), fc.string(), fc.constant('2025-01-02T03:04:05.678Z'), fc.array(fc.integer(), { maxLength: 2 }));
    const row = fc.record({ public_id: fc.constantFrom('p1', 'p2', 'p3'), fields: fc.dictionary(field, value, { maxKeys: 5 }) })
      .map(({ public_id, fields }) => ({ ...fields, public_id }) as ExportRow);
    fc.assert(fc.property(fc.array(row, { minLength: 1, maxLength: 8 }), (rows) => {
      const shape = new TableShape(initialColumns(dataset), POSTGRES_NAMING);
      shape.observe(rows);
      const dataColumns = shape.columns.filter((c) => !isBookkeepingColumn(c.name));
      const page = encodePage(dataset, rows, { dataColumns, knownMismatches: new Set(), homeless: new Set(shape.homeless) }, true);
      assert.equal(page.kind, 'text');
      if (page.kind !== 'text') return;
      // The kept version of each identity is latestByIdentity's (tested in columns.test.ts).
      const last = latestByIdentity(dataset, rows);
      const expected = [...last.values()].map((r) => {
        const { values, mismatched } = rowValues(r, shape);
        return [...dataColumns.map((c) => copyField(values.get(c.name), c.type)), copyField(mismatched, 'json')].join('\t');
      });
      // _mismatched's keys may come in another order: compare it as JSON.
      const lines = page.text.split('\n').slice(0, -1).map((l) => l.split('\t'));
      assert.equal(lines.length, expected.length);
      lines.forEach((fields, i) => {
        const want = expected[i]!.split('\t');
        assert.deepEqual(fields.slice(0, -1), want.slice(0, -1));
        const json = (s: string) => (s === '\\N' ? null : JSON.parse(s.replace(/\\\\/g, '\\')) as unknown);
        assert.deepEqual(json(fields.at(-1)!), json(want.at(-1)!));
      });
    }), { numRuns: 300 });
  });

  test('unseen fields and first misfits are news until observed; known misfits are not', () => {
    const dataset: SinkDataset = { code: 'D42', section: 'S9', key: 'D42', cursorField: 'updated_at', identity: 'key' };
    const shape = new TableShape([...initialColumns(dataset), { name: 'n', type: 'bigint' }]);
    const dataColumns = shape.columns.filter((c) => !isBookkeepingColumn(c.name));
    const layout = { dataColumns, knownMismatches: new Set<string>() };
    assert.equal(encodePage(dataset, [{ public_id: 'p', n: 1 }], layout, false).kind, 'text');
    assert.equal(encodePage(dataset, [{ public_id: 'p', fresh: 1 }], layout, false).kind, 'news');
    assert.equal(encodePage(dataset, [{ public_id: 'p', fresh: null }], layout, false).kind, 'text', 'a null field brings no column');
    assert.equal(encodePage(dataset, [{ public_id: 'p', n: 'x' }], layout, false).kind, 'news');
    assert.equal(encodePage(dataset, [{ public_id: 'p', n: 'x' }], { dataColumns, knownMismatches: new Set(['n']) }, false).kind, 'text');
    assert.throws(() => encodePage(dataset, [{ n: 1 }], layout, false), (error: unknown) => error instanceof SinkError && /no public_id/.test(error.message));
    const d16: SinkDataset = { ...dataset, identity: 'content' };
    const twins = [{ public_id: 'p', x: 1, updated_at: 't' }, { public_id: 'p', x: 2, updated_at: 't' }, { public_id: 'p', x: 1, updated_at: 't' }];
    const shape16 = new TableShape(initialColumns(d16));
    shape16.observe(twins);
    const page = encodePage(d16, twins, { dataColumns: shape16.columns.filter((c) => !isBookkeepingColumn(c.name)), knownMismatches: new Set() }, true);
    assert.ok(page.kind === 'text' && page.rows === 2, 'two distinct rows of one public_id, the repeat once');
    assert.ok(page.kind === 'text' && page.text.startsWith(`${contentRowKey(twins[1]!)}\t`), 'content key first, in last-occurrence order');
  });
});

describe('key order', () => {
  test('byteOrder sorts identities by their UTF-8 bytes, as COLLATE "C" does, whatever characters they hold', () => {
    const char = fc.oneof(fc.constantFrom('a', 'B', '0', '_', 'é', '\uD7FF', '\uE000', '\uFFFD', '\uFFFF', '😀', '\u{10FFFF}'), fc.string({ unit: 'grapheme', maxLength: 1 }));
    const key = fc.array(char, { maxLength: 6 }).map((cs) => cs.join(''));
    fc.assert(fc.property(fc.uniqueArray(key, { maxLength: 30 }), (keys) => {
      const want = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      assert.deepEqual(byteOrder([...keys]), want);
    }), { numRuns: 1000 });
  });
});

describe('loading', () => {
  test('importing the sink (and the package) loads no PostgreSQL driver: only connecting does', () => {
    const script = [
      "import { createRequire } from 'node:module';",
      `await import(${JSON.stringify(new URL('../../src/sinks/postgres-sink.ts', import.meta.url).pathname)});`,
      `await import(${JSON.stringify(new URL('../../src/index.ts', import.meta.url).pathname)});`,
      'const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => /node_modules[\\/]pg/.test(k));',
      'process.stdout.write(String(loaded.length));',
    ].join('\n');
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(out, '0');
  });
});

describe('SQL literals', () => {
  test('a dollar-quoted literal closes where it ends, whatever the text holds', () => {
    for (const text of ['', 'plain', '$lender$', 'ends with $lender', '$lender', "it's \\ $$ $x$"]) {
      const quoted = dollarQuoted(text);
      const tag = /^\$[a-z_0-9]*\$/.exec(quoted)![0];
      assert.equal(quoted.indexOf(tag, tag.length), tag.length + text.length, JSON.stringify(text));
      assert.equal(quoted.slice(tag.length, -tag.length), text);
    }
  });
});

describe('connection settings', () => {
  test('a URL, else DATABASE_URL, else the PG* variables of the given environment; defaults as libpq', () => {
    const env = { PGHOST: 'envhost', PGPORT: '6000', PGUSER: 'envuser', PGDATABASE: 'envdb' };
    const fromUrl = resolveConnection({ connectionString: 'postgres://u@h:5433/d?sslmode=disable', env });
    assert.deepEqual([fromUrl.host, fromUrl.port, fromUrl.user, fromUrl.database, fromUrl.ssl], ['h', 5433, 'u', 'd', false]);
    const partial = resolveConnection({ connectionString: 'postgresql://h2/', env });
    assert.deepEqual([partial.host, partial.port, partial.user, partial.database], ['h2', 6000, 'envuser', 'envdb']);
    const fromEnv = resolveConnection({ env });
    assert.equal(describeConnection(fromEnv), 'postgres://envuser@envhost:6000/envdb');
    const fromDatabaseUrl = resolveConnection({ env: { ...env, DATABASE_URL: 'postgres://dbu:s3cret-pw@dbhost/dbname' } });
    assert.equal(describeConnection(fromDatabaseUrl), 'postgres://dbu@dbhost:6000/dbname', 'a part the URL lacks comes from PG*');
    assert.equal(fromDatabaseUrl.urlPassword, 's3cret-pw');
    const bare = resolveConnection({ env: { PGUSER: 'only' } });
    assert.deepEqual([bare.host, bare.port, bare.database], ['localhost', 5432, 'only']);
    assert.equal(bare.applicationName, undefined, 'the sink names itself lender-streams then');
    assert.equal(resolveConnection({ connectionString: 'postgres://u@h/d?application_name=my-etl', env: { PGAPPNAME: 'other' } }).applicationName, 'my-etl');
    assert.equal(resolveConnection({ env: { PGAPPNAME: 'nightly-load' } }).applicationName, 'nightly-load');
    // Every TLS mode checks the certificate and the host name, libpq's require and verify-ca too.
    for (const mode of ['require', 'verify-ca', 'verify-full']) {
      assert.deepEqual(resolveConnection({ env: { PGSSLMODE: mode } }).ssl, { rejectUnauthorized: true }, mode);
    }
  });

  test('a password in the connection string, a bad URL or an unknown parameter is refused without echoing it', () => {
    const secret = 'hunter2-very-secret';
    // Without the //, URL reads the rest as a path, where a password would go unnoticed.
    const withoutSlashes = [`postgres:u:${secret}@h/d`, `postgresql:/u:${secret}@h/d`, `POSTGRES:u:${secret}@h/d`];
    // A password holding '/', '?' or '#' unencoded ends the host there; its rest would be taken
    // for the port, the path, a parameter or a fragment.
    const cutShort = ['2024/Winter', '2024?Winter', '2024#Winter', 'a/b?c#d'].map((pw) => `postgres://etl:${pw}@h:5432/d`);
    for (const connectionString of [`postgres://u:${secret}@h/d`, `postgres://u@h/d?password=${secret}`, `http://u:${secret}@h/d`, `postgres://u:${secret}@h:99999999/d`, ...withoutSlashes, ...cutShort]) {
      assert.throws(() => resolveConnection({ connectionString, env: {} }), (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.ok(!error.message.includes(secret) && !error.message.includes('Winter') && !error.message.includes('2024'), error.message);
        return true;
      });
      assert.throws(() => postgresSink({ connectionString, env: {} }), ConfigError);
    }
    for (const DATABASE_URL of [...withoutSlashes, ...cutShort]) {
      assert.throws(() => resolveConnection({ env: { DATABASE_URL } }), (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.ok(!error.message.includes(secret) && !error.message.includes('Winter'), error.message);
        return true;
      });
    }
    assert.throws(() => resolveConnection({ connectionString: 'postgres://etl:2024/Winter@h:5432/d', env: {} }), /has an '@' after its host/);
    // An '@' after the host where no password can be: still refused, to be safe, with the remedy.
    assert.throws(() => resolveConnection({ connectionString: 'postgres://u@h/db@work', env: {} }), /percent-encode/);
  });

  test('the password file: first matching line, wildcards, escapes, sockets as localhost', () => {
    const file = [
      '# comment',
      'otherhost:5432:*:u:wrong',
      'h:*:db:u:pa\\:ss\\\\word',
      '*:*:*:*:fallback',
    ].join('\n');
    assert.equal(pgpassLookup(file, { host: 'h', port: 5432, database: 'db', user: 'u' }), 'pa:ss\\word');
    assert.equal(pgpassLookup(file, { host: 'h', port: 5432, database: 'other', user: 'u' }), 'fallback');
    assert.equal(pgpassLookup('localhost:5432:d:u:sock', { host: '/var/run/postgresql', port: 5432, database: 'd', user: 'u' }), 'sock');
    assert.equal(pgpassLookup('h:1:d:u:x', { host: 'h', port: 2, database: 'd', user: 'u' }), undefined);
  });
});

// ---------------------------------------------------------------- against a real cluster

/** What a dataset's table holds, as rows the service would have sent, canonical JSON each. */
async function storedRows(pg: PgCluster, db: PgDatabase, table: string, schema = 'lender'): Promise<string[]> {
  const types = await columnTypes(pg, db, table, schema);
  const r = await adminQuery<{ j: Record<string, unknown> }>(pg, `SELECT to_jsonb(t) AS j FROM "${schema}"."${table}" t`, [], db.database);
  return r.rows.map(({ j }) => {
    const row: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(j)) {
      if (name === '_row_key' || value === null) continue;
      if (name === '_mismatched') Object.assign(row, value as object);
      else row[name] = types.get(name) === 'timestamp with time zone' ? new Date(value as string).toISOString() : value;
    }
    return canonicalJson(row);
  }).sort();
}

/** The same normalisation of the service's rows: nulls dropped, instants in one spelling. */
function asStored(rows: readonly ExportRow[], types: Map<string, string>): string[] {
  return rows.map((r) => {
    const row: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(r)) {
      if (value === null || value === undefined) continue;
      row[name] = types.get(name) === 'timestamp with time zone' && fits(value, 'timestamptz') ? new Date(value as string).toISOString() : value;
    }
    return canonicalJson(row);
  }).sort();
}

async function columnTypes(pg: PgCluster, db: PgDatabase, table: string, schema = 'lender'): Promise<Map<string, string>> {
  const r = await adminQuery<{ column_name: string; data_type: string }>(
    pg, 'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2', [schema, table], db.database,
  );
  return new Map(r.rows.map((c) => [c.column_name, c.data_type]));
}

async function count(pg: PgCluster, db: PgDatabase, sql: string, params: unknown[] = []): Promise<number> {
  const r = await adminQuery<{ n: string }>(pg, sql, params, db.database);
  return Number(r.rows[0]!.n);
}

/** Waits (polling the server, not the clock) until a session waits for an advisory lock. */
async function waitForLockWaiters(pg: PgCluster, db: PgDatabase): Promise<void> {
  while (await count(pg, db, "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted") === 0) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function dataset(code: string, overrides: Partial<SinkDataset> = {}): SinkDataset {
  return { code, section: 'S9', key: code, cursorField: 'updated_at', identity: 'key', ...overrides };
}

function stateOf(code: string, mark: string): DatasetState {
  return { version: 1, dataset: code, highWater: { value: mark, ids: [] }, load: null };
}

const at = (second: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, second)).toISOString();

/** Everything a sink lets out, where a password must never be. */
function exposed(sink: Sink, notices: readonly SinkNotice[], errors: readonly unknown[]): string {
  const texts = [sink.target, ...notices.map((n) => n.message)];
  for (const e of errors) {
    for (let x: unknown = e; x instanceof Error; x = x.cause) texts.push(x.message, x.stack ?? '', JSON.stringify(x));
  }
  return texts.join('\n');
}

describe('PostgreSQL sink on a real cluster', () => {
  let pg: PgCluster;
  let f: Fixture;
  before(async () => {
    pg = await startPostgres();
    f = await fixture({ seed: 31, scale: 300 });
  });
  after(async () => {
    await f?.close();
    await pg?.stop();
  });

  async function sandboxPost(path: string, body?: unknown): Promise<void> {
    const agent = new Agent({ connect: { ca: f.sandbox.ca } });
    try {
      const r = await request(`${f.sandbox.authUrl}${path}`, {
        method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}),
      });
      await r.body.text();
      assert.equal(r.statusCode, 200, path);
    } finally {
      await agent.close();
    }
  }

  async function reference(code: DatasetCode): Promise<ExportRow[]> {
    return plainWalk(f.client, code, code === 'D03' ? EVERYTHING : {});
  }

  test('a text is typed as an instant exactly when PostgreSQL and DuckDB both store it as it is: a day its month has, hours to 23, a year from 1', async () => {
    // Date.parse takes 2023-02-29 as March 1st: such a value typed as an instant made the page
    // fail in both databases, at every run.
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const instant = fc.tuple(fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')), two(13), two(32), two(25), two(61), two(61),
      fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }))
      .map(([y, mo, d, h, mi, sec, frac]) => `${y}-${mo}-${d}T${h}:${mi}:${sec}${frac === undefined ? '' : `.${frac}`}Z`);
    const seed = runSeed();
    const values = [...new Set([
      '2024-02-29T00:00:00Z', '2000-02-29T12:00:00.5Z', '2023-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2024-04-31T00:00:00Z',
      '2024-12-31T24:00:00Z', '2024-12-31T23:59:60Z', '0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999Z',
      ...fc.sample(instant, { numRuns: 3000, seed }),
    ])];
    const db = await createDatabase(pg);
    await adminQuery(pg, `CREATE FUNCTION kept(v text) RETURNS boolean LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM v::timestamptz;
        -- To the second: PostgreSQL rounds a fraction to the microsecond (.9999999 to the next second).
        RETURN to_char((left(v, 19) || 'Z')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') = left(v, 19);
      EXCEPTION WHEN others THEN
        RETURN false;
      END $$`, [], db.database);
    const inPostgres = new Map((await adminQuery<{ v: string; kept: boolean }>(pg, 'SELECT v, kept(v) FROM unnest($1::text[]) v', [values], db.database))
      .rows.map((r) => [r.v, r.kept]));
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    await duck.run("SET TimeZone = 'UTC'");
    // The values hold digits, '-', ':', 'T', '.' and 'Z' only.
    const rows = (await duck.runAndReadAll(`SELECT v, strftime(TRY_CAST(v AS TIMESTAMPTZ), '%Y-%m-%dT%H:%M:%S') AS s
      FROM (VALUES ${values.map((v) => `('${v}')`).join(', ')}) t(v)`)).getRowsJS() as [string, string | null][];
    const inDuckDb = new Map(rows.map(([v, seconds]) => [v, seconds === v.slice(0, 19)]));
    duck.closeSync();
    const wrong = values.filter((v) => fits(v, 'timestamptz') !== (inPostgres.get(v) === true && inDuckDb.get(v) === true));
    assert.deepEqual(wrong.slice(0, 5).map((v) => `${v} typed ${fits(v, 'timestamptz') ? 'instant' : 'text'}; PostgreSQL ${inPostgres.get(v)}, DuckDB ${inDuckDb.get(v)}`), [], `seed ${seed} (LENDER_SEED replays it)`);
    assert.ok(values.filter((v) => fits(v, 'timestamptz')).length > 1000, 'many of the values are instants');
  });

  test('sync() of D07, D03 (via) and D16 (content identity) stores exactly the reference walk, D07 typed', async () => {
    const db = await createDatabase(pg);
    const notices: SinkNotice[] = [];
    const sink = postgresSink({ connectionString: db.url, env: db.env, onNotice: (n) => notices.push(n) });
    try {
      const summary = await sync(f.client, ['D07', 'D03', 'D16'], { to: sink, limit: 100 });
      for (const code of ['D07', 'D03', 'D16'] as const) {
        const table = code.toLowerCase();
        assert.equal(summary[code]!.location, `lender.${table}`);
        const expected = await reference(code);
        assert.ok(expected.length > 50, `${code} has rows`);
        const types = await columnTypes(pg, db, table);
        // D16's rows are told apart by content: a row sent twice unchanged is one row.
        const want = [...new Set(asStored(expected, types))].sort();
        assert.deepEqual(await storedRows(pg, db, table), want, code);
        assert.ok(notices.some((n) => n.kind === 'table-created' && n.dataset === code));
        const state = await adminQuery<{ state: DatasetState }>(pg, 'SELECT state FROM lender._lender_state WHERE key = $1', [code], db.database);
        assert.ok(state.rows[0]!.state.completedAt !== undefined, `${code} state says complete`);
      }
      assert.equal(notices.filter((n) => n.kind === 'column-added').length, 0, 'the columns of tables made by this run are not news');
      const d07 = await columnTypes(pg, db, 'd07');
      assert.deepEqual(Object.fromEntries([...d07].sort()), {
        _mismatched: 'jsonb', amount: 'bigint', created_at: 'timestamp with time zone', failure_reason: 'text', is_settled: 'boolean',
        paid_before_submission: 'boolean', paid_date: 'timestamp with time zone', payment_status: 'text', payment_type: 'text',
        public_id: 'text', settled_amount: 'bigint', updated_at: 'timestamp with time zone',
      });
      const keys = await adminQuery<{ table: string; column: string }>(pg, `
        SELECT tc.table_name AS table, kcu.column_name AS column FROM information_schema.table_constraints tc
        JOIN information_schema.key_column_usage kcu USING (constraint_schema, constraint_name)
        WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = 'lender' AND tc.table_name NOT LIKE '\\_lender\\_%' ORDER BY 1`, [], db.database);
      assert.deepEqual(keys.rows.map((k) => `${k.table}.${k.column}`), ['d03.public_id', 'd07.public_id', 'd16._row_key']);
      assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM lender.d16'), await count(pg, db, 'SELECT count(DISTINCT _row_key) AS n FROM lender.d16'));
    } finally {
      await sink.close();
    }
  });

  test('a database its owner prepared: a user without CREATE anywhere syncs into it, incrementally', async () => {
    const db = await createDatabase(pg);
    const owner = postgresSink({ connectionString: db.url, env: db.env });
    try {
      await sync(f.client, ['D07', 'D26'], { to: owner, limit: 200 });
    } finally {
      await owner.close();
    }
    const password = randomBytes(12).toString('hex');
    await adminQuery(pg, `CREATE ROLE loader LOGIN PASSWORD '${password}'`);
    // A column of a type of the owner's own, in a schema the loader may not use: the loader's
    // staging table cannot name it, and does not need to.
    await adminQuery(pg, `
      REVOKE CREATE ON SCHEMA public FROM PUBLIC;
      CREATE SCHEMA hidden; CREATE DOMAIN hidden.status AS text;
      ALTER TABLE lender.d07 ALTER COLUMN payment_status TYPE hidden.status;
      GRANT USAGE ON SCHEMA lender TO loader;
      GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA lender TO loader;`, [], db.database);
    const canCreate = await adminQuery<{ schema: boolean; database: boolean }>(pg,
      `SELECT has_schema_privilege('loader', 'lender', 'CREATE') AS schema, has_database_privilege('loader', current_database(), 'CREATE') AS database`, [], db.database);
    assert.deepEqual(canCreate.rows[0], { schema: false, database: false });
    await sandboxPost('/__sandbox/advance');
    const url = `postgres://loader@${pg.host}:${pg.port}/${db.database}`;
    const loader = postgresSink({ connectionString: url, env: { PGPASSWORD: password } });
    try {
      const summary = await sync(f.client, ['D07', 'D26'], { to: loader, limit: 200 });
      assert.equal(summary.D07!.mode, 'incremental');
      assert.ok(summary.D07!.rows > 0, 'the advance changed rows');
    } finally {
      await loader.close();
    }
    const expected = await reference('D07');
    const types = await columnTypes(pg, db, 'd07');
    assert.deepEqual(await storedRows(pg, db, 'd07'), [...new Set(asStored(expected, types))].sort());
  });

  test('a first load of a via dataset plans its parts from the month of its first row, one after another to the end', async () => {
    const db = await createDatabase(pg);
    const sink = postgresSink({ connectionString: db.url, env: db.env });
    try {
      await sync(f.client, ['D03'], { to: sink, limit: 100 });
      const expected = await reference('D03');
      const cursor = datasetInfo('D03')!.cursorField;
      const first = expected.map((r) => String(r[cursor])).sort()[0]!;
      const firstMonth = `${first.slice(0, 7)}-01T00:00:00.000Z`;
      assert.ok(firstMonth > DEFAULT_ORIGIN, `D03's rows start after the origin (${firstMonth})`);
      const { rows: parts } = await adminQuery<{ plan: { since: string; until: string }; rows: string }>(pg,
        "SELECT plan, rows FROM lender._lender_parts WHERE key = 'D03' ORDER BY part", [], db.database);
      assert.equal(parts[0]!.plan.since, firstMonth, 'the first part starts with the month of the first row: none for the empty years before');
      for (let i = 1; i < parts.length; i++) assert.equal(parts[i]!.plan.since, parts[i - 1]!.plan.until, `part ${i} follows part ${i - 1}`);
      assert.equal(parts.reduce((n, p) => n + Number(p.rows), 0), expected.length, 'the parts hold every row');
    } finally {
      await sink.close();
    }
  });

  test('a shared load counts every retry, its probe for where the data starts included: as many as the faults the service answered', async () => {
    const db = await createDatabase(pg);
    const sink = postgresSink({ connectionString: db.url, env: db.env });
    // Retried at once and without end: a third of the requests fail, and none may fail the load.
    const client = await LenderClient.login({ ...f.sandbox.credentials('demo'), retry: { attempts: 1_000, baseDelayMs: 1, maxDelayMs: 2 } });
    const before = f.sandbox.stats().faultsInjected;
    f.sandbox.setFaults({ faults: { '500': 0.3 } });
    try {
      // One window at a time: with two, a probe dropped once an earlier one found the data may
      // have had its fault injected with no answer read, hence no retry, and the counts differ.
      const summary = await sync(client, ['D03'], { to: sink, limit: 100, concurrency: 1 });
      const injected = f.sandbox.stats().faultsInjected - before;
      assert.ok(injected > 0, 'faults were injected');
      assert.equal(summary.D03!.retries, injected);
    } finally {
      f.sandbox.setFaults({ faults: {} });
      await client.close();
      await sink.close();
    }
  });

  // A timeout: were a plan made under the load's lock, the first would wait for the others forever.
  test('workers planning a load at once (each outside a transaction) keep one plan, and all join it', { timeout: 30_000 }, async () => {
    const db = await createDatabase(pg);
    const sinks = [0, 1, 2].map(() => postgresSink({ connectionString: db.url, env: db.env }));
    try {
      const ds = dataset('D48');
      let planning = 0;
      let allPlanning!: () => void;
      const together = new Promise<void>((resolve) => (allPlanning = resolve));
      const plan = async (committed: DatasetState | undefined) => {
        assert.equal(committed, undefined, 'nothing committed yet');
        planning += 1;
        if (planning === sinks.length) allPlanning();
        await together;
        return { mode: 'initial' as const, parts: [{ since: at(0), until: at(30), start: null }, { since: at(30), until: at(60), start: null }] };
      };
      const joined = await Promise.all(sinks.map(async (sink) => (await sink.leases!()).join(ds, plan)));
      assert.equal(planning, sinks.length, 'every worker planned');
      assert.equal(new Set(joined.map((j) => j.loadId)).size, 1, 'all joined one load');
      assert.equal(await count(pg, db, "SELECT count(DISTINCT load_id) AS n FROM lender._lender_parts WHERE key = 'D48'"), 1, 'one plan stored');
      assert.equal(await count(pg, db, "SELECT count(*) AS n FROM lender._lender_parts WHERE key = 'D48'"), 2);
    } finally {
      for (const sink of sinks) await sink.close();
    }
  });

  test('after advance() and churn, the next syncs leave every row once, in its latest version', async () => {
    const db = await createDatabase(pg);
    const run = async () => {
      const sink = postgresSink({ connectionString: db.url, env: db.env });
      try {
        return await sync(f.client, ['D07', 'D16'], { to: sink, limit: 50 });
      } finally {
        await sink.close();
      }
    };
    const first = await run();
    assert.equal(first.D07!.mode, 'initial');
    await sandboxPost('/__sandbox/advance');
    await sandboxPost('/__sandbox/churn', { rate: 300 });
    let second;
    try {
      second = await run();
    } finally {
      await sandboxPost('/__sandbox/churn', { rate: 0 });
    }
    assert.equal(second.D07!.mode, 'incremental');
    assert.ok(second.D07!.rows > 0, 'the incremental run found changes');
    // Rows churned after the second run read past them come with a third.
    await run();
    const d07 = await columnTypes(pg, db, 'd07');
    assert.deepEqual(await storedRows(pg, db, 'd07'), asStored(await reference('D07'), d07));
    // D16 rows have no identity but their content: an updated row is a new row, and the version it
    // replaced stays beside it (nothing says which row it was). Every current row is there; every
    // other is an older version of a case that has a newer row.
    const d16 = await columnTypes(pg, db, 'd16');
    const current = await reference('D16');
    const stored = await storedRows(pg, db, 'd16');
    const want = new Set(asStored(current, d16));
    assert.deepEqual([...want].filter((r) => !stored.includes(r)), [], 'every current D16 row is stored');
    const older = stored.filter((r) => !want.has(r)).map((r) => JSON.parse(r) as ExportRow);
    assert.ok(older.length > 0, 'advance and churn updated D16 rows');
    for (const old of older) {
      assert.ok(current.some((r) => r.public_id === old.public_id && String(r.updated_at) > String(old.updated_at)), `${String(old.public_id)} has a newer row`);
    }
    const total = await count(pg, db, 'SELECT count(*) AS n FROM lender.d07');
    assert.equal(total, await count(pg, db, 'SELECT count(DISTINCT public_id) AS n FROM lender.d07'));
  });

  test('a column another process added first is learnt, not told as new, whatever its type; the process that added it tells it once', async () => {
    const db = await createDatabase(pg);
    const ds = dataset('D46');
    const first = postgresSink({ connectionString: db.url, env: db.env });
    // Opened on the existing table, as a second worker is.
    const aNotices: SinkNotice[] = [];
    const bNotices: SinkNotice[] = [];
    try {
      await first.open(ds);
      await first.commit({ dataset: ds, rows: [{ public_id: 'p0', updated_at: at(1), n: 1 }], state: stateOf('D46', at(1)) });
    } finally {
      await first.close();
    }
    const a = postgresSink({ connectionString: db.url, env: db.env, onNotice: (n) => aNotices.push(n) });
    const b = postgresSink({ connectionString: db.url, env: db.env, onNotice: (n) => bNotices.push(n) });
    try {
      // Both learn the table as it is.
      await a.open(ds);
      await b.open(ds);
      await a.commit({ dataset: ds, rows: [{ public_id: 'p1', updated_at: at(2), n: 2 }], state: stateOf('D46', at(2)) });
      await b.commit({ dataset: ds, rows: [{ public_id: 'p2', updated_at: at(2), n: 3 }], state: stateOf('D46', at(2)) });
      // A adds two fields; B then meets the same fields, one with a value of another type.
      await a.commit({ dataset: ds, rows: [{ public_id: 'p3', updated_at: at(3), n: 4, extra: 'text', count: 5 }], state: stateOf('D46', at(3)) });
      await b.commit({ dataset: ds, rows: [{ public_id: 'p4', updated_at: at(3), n: 5, extra: 'more', count: 'many', own: true }], state: stateOf('D46', at(3)) });
    } finally {
      await a.close();
      await b.close();
    }
    assert.deepEqual(aNotices.map((n) => n.message).sort(), ['lender.d46: new column count (bigint)', 'lender.d46: new column extra (text)']);
    assert.deepEqual(bNotices.map((n) => n.message), [
      'lender.d46: new column own (boolean)',
      'lender.d46: count had a text value in a bigint column; such values are kept in _mismatched',
    ]);
    const rows = await adminQuery<{ public_id: string; count: string | null; _mismatched: unknown }>(pg, 'SELECT public_id, count, _mismatched FROM lender.d46 WHERE public_id = $1', ['p4'], db.database);
    assert.deepEqual(rows.rows, [{ public_id: 'p4', count: null, _mismatched: { count: 'many' } }]);
  });

  test('new fields become columns, misfits go to _mismatched, each told once per run (a new table\'s columns are no news)', async () => {
    const db = await createDatabase(pg);
    const ds = dataset('D42');
    const notices: SinkNotice[] = [];
    const sink = postgresSink({ connectionString: db.url, env: db.env, onNotice: (n) => notices.push(n) });
    try {
      assert.equal(await sink.open(ds), undefined);
      await sink.commit({ dataset: ds, rows: [{ public_id: 'p1', updated_at: at(1), n: 1, s: 'x', obj: { a: [1] } }], state: stateOf('D42', at(1)) });
      assert.deepEqual(notices.map((n) => n.kind), ['table-created']);
      await sink.commit({
        dataset: ds,
        rows: [
          { public_id: 'p2', updated_at: at(2), n: 'not a number', flag: true, _mismatched: 'own field' },
          { public_id: 'p3', updated_at: at(3), n: 2, flag: null, later: null },
        ],
        state: stateOf('D42', at(3)),
      });
      await sink.commit({ dataset: ds, rows: [{ public_id: 'p4', updated_at: at(4), n: 'again', ratio: 0.5 }], state: stateOf('D42', at(4)) });
      assert.deepEqual(notices.map((n) => n.message), [
        'lender.d42: new table',
        'lender.d42: n had a text value in a bigint column; such values are kept in _mismatched',
      ]);
      const types = await columnTypes(pg, db, 'd42');
      assert.deepEqual(Object.fromEntries([...types].sort()), {
        _mismatched: 'jsonb', flag: 'boolean', n: 'bigint', obj: 'jsonb', public_id: 'text', ratio: 'double precision', s: 'text', updated_at: 'timestamp with time zone',
      });
      const rows = await adminQuery<{ public_id: string; n: string | null; _mismatched: unknown }>(pg, 'SELECT public_id, n, _mismatched FROM lender.d42 ORDER BY 1', [], db.database);
      assert.deepEqual(rows.rows, [
        { public_id: 'p1', n: '1', _mismatched: null },
        { public_id: 'p2', n: null, _mismatched: { n: 'not a number', _mismatched: 'own field' } },
        { public_id: 'p3', n: '2', _mismatched: null },
        { public_id: 'p4', n: null, _mismatched: { n: 'again' } },
      ]);
      assert.deepEqual(await sink.open(ds), stateOf('D42', at(4)));
    } finally {
      await sink.close();
    }
    // Another run on the existing table: a new field is news now, and the misfit is told again.
    const again: SinkNotice[] = [];
    const next = postgresSink({ connectionString: db.url, env: db.env, onNotice: (n) => again.push(n) });
    try {
      await next.open(ds);
      await next.commit({ dataset: ds, rows: [{ public_id: 'p5', updated_at: at(5), n: 'x', extra: '2025-02-01T00:00:00Z' }], state: stateOf('D42', at(5)) });
      await next.commit({ dataset: ds, rows: [{ public_id: 'p6', updated_at: at(6), n: 'y', extra: '2025-02-02T00:00:00Z', more: [1] }], state: stateOf('D42', at(6)) });
      assert.deepEqual(again.map((n) => n.message), [
        'lender.d42: new column extra (timestamptz)',
        'lender.d42: n had a text value in a bigint column; such values are kept in _mismatched',
        'lender.d42: new column more (json)',
      ]);
      assert.equal((await columnTypes(pg, db, 'd42')).get('extra'), 'timestamp with time zone');
    } finally {
      await next.close();
    }
  });

  // (A NUL in a name fails the page as a NUL in a value does: PostgreSQL stores it nowhere.)
  test('fields named like the system columns every table has (xmin, ctid, …) keep their values in _mismatched; the load goes on', async () => {
    const db = await createDatabase(pg);
    const ds = dataset('D45');
    const notices: SinkNotice[] = [];
    const sink = postgresSink({ connectionString: db.url, env: db.env, onNotice: (n) => notices.push(n) });
    const system = { xmin: 1, ctid: 'a', tableoid: 2, cmax: 3, cmin: 4, xmax: 5 };
    try {
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [{ public_id: 'p1', updated_at: at(1), n: 1, XMIN: 'upper case is another name' }], state: stateOf('D45', at(1)) });
      await sink.commit({ dataset: ds, rows: [{ public_id: 'p2', updated_at: at(2), n: 2, ...system }], state: stateOf('D45', at(2)) });
      await sink.commit({ dataset: ds, rows: [{ public_id: 'p1', updated_at: at(3), n: 3, xmin: 9 }], state: stateOf('D45', at(3)) });
      assert.deepEqual(notices.filter((n) => n.kind === 'no-column').map((n) => n.message).sort(),
        Object.keys(system).map((name) => `lender.d45: ${name} gets no column (${name} is a system column of every PostgreSQL table); its values are kept in _mismatched`).sort());
    } finally {
      await sink.close();
    }
    const rows = await adminQuery<{ public_id: string; n: string; XMIN: string | null; _mismatched: unknown }>(pg,
      'SELECT public_id, n, "XMIN", _mismatched FROM lender.d45 ORDER BY 1', [], db.database);
    assert.deepEqual(rows.rows, [
      { public_id: 'p1', n: '3', XMIN: null, _mismatched: { xmin: 9 } },
      { public_id: 'p2', n: '2', XMIN: null, _mismatched: system },
    ]);
  });

  test('a dataset code too long for a table name (a sink of your own codes) is refused, not cut into another table\'s name', async () => {
    const db = await createDatabase(pg);
    const sink = postgresSink({ connectionString: db.url, env: db.env });
    const fits = dataset('x'.repeat(49));
    const long = dataset('x'.repeat(70));
    try {
      await sink.open(fits);
      await sink.commit({ dataset: fits, rows: [{ public_id: 'p1', updated_at: at(1) }], state: stateOf(fits.code, at(1)) });
      await sink.commit({ dataset: fits, rows: [{ public_id: 'p1', updated_at: at(2) }], state: stateOf(fits.code, at(2)) });
      await assert.rejects(async () => {
        await sink.open(long);
        await sink.commit({ dataset: long, rows: [{ public_id: 'p1', updated_at: at(1) }], state: stateOf(long.code, at(1)) });
      }, (error: Error) => error instanceof SinkError && error.message.includes(`the dataset code ${long.code} is too long for a PostgreSQL table: at most 49 bytes`));
    } finally {
      await sink.close();
    }
    assert.equal(await count(pg, db, `SELECT count(*) AS n FROM lender.${'x'.repeat(49)}`), 1);
  });

  test('a field name PostgreSQL cannot hold (over 63 bytes, two sharing their first 63, empty) keeps its values in _mismatched, told once a run; the next run goes on', async () => {
    const db = await createDatabase(pg);
    const ds = dataset('D44');
    const long = `a_${'very_'.repeat(12)}long_field`;
    const twin = `${long}_2`;
    assert.ok(Buffer.byteLength(long) > 63 && long.slice(0, 63) === twin.slice(0, 63));
    const notices: SinkNotice[] = [];
    const sink = postgresSink({ connectionString: db.url, env: db.env, onNotice: (n) => notices.push(n) });
    try {
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [{ public_id: 'p1', updated_at: at(1), n: 1 }], state: stateOf('D44', at(1)) });
      await sink.commit({ dataset: ds, rows: [{ public_id: 'p2', updated_at: at(2), n: 2, [long]: 'one', [twin]: 'two', '': 'empty' }], state: stateOf('D44', at(2)) });
      await sink.commit({ dataset: ds, rows: [{ public_id: 'p1', updated_at: at(3), n: 3, [long]: 'merged' }], state: stateOf('D44', at(3)) });
      assert.deepEqual(notices.filter((n) => n.kind === 'no-column').map((n) => n.message), [
        `lender.d44: ${long} gets no column (PostgreSQL names have at most 63 bytes); its values are kept in _mismatched`,
        `lender.d44: ${twin} gets no column (PostgreSQL names have at most 63 bytes); its values are kept in _mismatched`,
        'lender.d44:  gets no column (an empty name); its values are kept in _mismatched',
      ]);
    } finally {
      await sink.close();
    }
    const again: SinkNotice[] = [];
    const next = postgresSink({ connectionString: db.url, env: db.env, onNotice: (n) => again.push(n) });
    try {
      await next.open(ds);
      await next.commit({ dataset: ds, rows: [{ public_id: 'p3', updated_at: at(4), n: 4, [twin]: 'three' }], state: stateOf('D44', at(4)) });
      assert.deepEqual(again.map((n) => n.kind), ['no-column']);
    } finally {
      await next.close();
    }
    const rows = await adminQuery<{ public_id: string; n: string; _mismatched: unknown }>(pg, 'SELECT public_id, n, _mismatched FROM lender.d44 ORDER BY 1', [], db.database);
    assert.deepEqual(rows.rows, [
      { public_id: 'p1', n: '3', _mismatched: { [long]: 'merged' } },
      { public_id: 'p2', n: '2', _mismatched: { [long]: 'one', [twin]: 'two', '': 'empty' } },
      { public_id: 'p3', n: '4', _mismatched: { [twin]: 'three' } },
    ]);
    assert.deepEqual([...(await columnTypes(pg, db, 'd44')).keys()].sort(), ['_mismatched', 'n', 'public_id', 'updated_at']);
  });

  test('an older version never overwrites a newer one, across pages and within one (ties: the later read wins)', async () => {
    const db = await createDatabase(pg);
    const ds = dataset('D43');
    const sink = postgresSink({ connectionString: db.url, env: db.env });
    try {
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [{ public_id: 'a', updated_at: at(10), v: 'new' }, { public_id: 'b', updated_at: at(10), v: 'b10' }], state: stateOf('D43', at(10)) });
      await sink.commit({
        dataset: ds,
        rows: [
          { public_id: 'a', updated_at: at(5), v: 'late and old' },
          { public_id: 'b', updated_at: at(10), v: 'same instant, read later' },
          { public_id: 'c', updated_at: at(1), v: 'first' },
          { public_id: 'c', updated_at: at(2), v: 'last' },
          { public_id: 'd', updated_at: at(3), v: 'newer, read first' },
          { public_id: 'd', updated_at: at(2), v: 'older, read later' },
        ],
        state: stateOf('D43', at(10)),
      });
      const rows = await adminQuery<{ public_id: string; v: string }>(pg, 'SELECT public_id, v FROM lender.d43 ORDER BY 1', [], db.database);
      assert.deepEqual(rows.rows, [{ public_id: 'a', v: 'new' }, { public_id: 'b', v: 'same instant, read later' }, { public_id: 'c', v: 'last' }, { public_id: 'd', v: 'newer, read first' }]);
    } finally {
      await sink.close();
    }
  });

  test('a lone surrogate (a text cut inside an emoji) is stored as U+FFFD, JSON and state included: ids stored alike are one identity, in a page and across pages', async () => {
    const db = await createDatabase(pg);
    const ds = dataset('D46');
    const mark = (value: string, ids: string[]): DatasetState => ({ ...stateOf('D46', value), highWater: { value, ids } });
    const sink = postgresSink({ connectionString: db.url, env: db.env });
    try {
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [
        { public_id: 'x\ud83d', updated_at: at(1), v: 'one', j: { 'k\ud83d': ['a\udc00'] } },
        { public_id: 'x\ud83e', updated_at: at(2), v: 'two', j: null },
        { public_id: 'y', updated_at: at(2), v: 'y\ud83d', j: { k: 'b\ud83d', n: 1 } },
        { public_id: 'z', updated_at: at(2), v: { t: 'c\ud83d' }, j: null },
      ], state: mark(at(2), ['x\ud83e', 'y']) });
      await sink.commit({ dataset: ds, rows: [{ public_id: 'x\udc00', updated_at: at(0), v: 'older' }], state: mark(at(2), ['x\ud83e', 'y']) });
      await sink.commit({ dataset: ds, rows: [{ public_id: 'x\ud83d', updated_at: at(3), v: 'three' }], state: mark(at(3), ['x\ud83d']) });
      assert.deepEqual((await sink.open(ds))?.highWater, { value: at(3), ids: ['x\ufffd'] });
      const rows = await adminQuery(pg, 'SELECT public_id, v, j, _mismatched AS m FROM lender.d46 ORDER BY 1', [], db.database);
      assert.deepEqual(rows.rows, [
        { public_id: 'x\ufffd', v: 'three', j: null, m: null },
        { public_id: 'y', v: 'y\ufffd', j: { k: 'b\ufffd', n: 1 }, m: null },
        { public_id: 'z', v: null, j: null, m: { v: { t: 'c\ufffd' } } },
      ]);
    } finally {
      await sink.close();
    }
  });

  test('text and JSON with tabs, newlines, backslashes, quotes and non-ASCII come back exactly; a NUL fails the commit whole', async () => {
    const db = await createDatabase(pg);
    const ds = dataset('D44');
    const sink = postgresSink({ connectionString: db.url, env: db.env });
    const nasty = 'tab\there\nnew line\r\\N \\. \\\\ "quoted" \'single\' ünïcødé 🚀 $lender$ $$ end\\ $lender';
    try {
      await sink.open(ds);
      await sink.commit({ dataset: ds, rows: [{ public_id: nasty, updated_at: at(1), text: nasty, doc: { [nasty]: [nasty, 1.5, null, true] } }], state: stateOf('D44', nasty) });
      const r = await adminQuery<{ public_id: string; text: string; doc: unknown }>(pg, 'SELECT public_id, text, doc FROM lender.d44', [], db.database);
      assert.deepEqual(r.rows, [{ public_id: nasty, text: nasty, doc: { [nasty]: [nasty, 1.5, null, true] } }]);
      assert.deepEqual(await sink.open(ds), stateOf('D44', nasty), 'the state round-trips too');
      await assert.rejects(
        sink.commit({ dataset: ds, rows: [{ public_id: 'ok', updated_at: at(2) }, { public_id: 'bad', updated_at: at(2), text: 'a\u0000b' }], state: stateOf('D44', at(2)) }),
        (error: unknown) => error instanceof SinkError && /lender\.d44: the row bad cannot be stored: .*NUL/.test(error.message),
      );
      assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM lender.d44'), 1);
      assert.deepEqual(await sink.open(ds), stateOf('D44', nasty));
    } finally {
      await sink.close();
    }
  });

  test('a commit whose state write fails, or whose connection dies mid-way, leaves neither rows nor state', async () => {
    const db = await createDatabase(pg);
    const sink = postgresSink({ connectionString: db.url, env: db.env });
    const errors: unknown[] = [];
    try {
      const fail = dataset('D45', { key: 'FAIL' });
      const kill = dataset('D46', { key: 'KILL' });
      await sink.open(fail);
      await sink.open(kill);
      // The state is the last statement of a commit: failing it (an error, or the backend killed
      // while running it) comes after the rows were merged.
      await adminQuery(pg, `
        CREATE FUNCTION lender.sabotage() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.key = 'FAIL' THEN RAISE EXCEPTION 'state write refused'; END IF;
          IF NEW.key = 'KILL' THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER sabotage BEFORE INSERT OR UPDATE ON lender._lender_state FOR EACH ROW EXECUTE FUNCTION lender.sabotage();`, [], db.database);
      const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ public_id: `r${i}`, updated_at: at(i), fresh_field: i }));
      for (const ds of [fail, kill]) {
        await assert.rejects(sink.commit({ dataset: ds, rows: rows(300), state: stateOf(ds.code, at(299)) }), (error: unknown) => {
          errors.push(error);
          return error instanceof SinkError && error.message.includes(db.database);
        });
        assert.equal(await count(pg, db, `SELECT count(*) AS n FROM lender.${ds.code.toLowerCase()}`), 0, `${ds.key}: no rows`);
        assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM lender._lender_state'), 0, `${ds.key}: no state`);
        assert.equal((await columnTypes(pg, db, ds.code.toLowerCase())).has('fresh_field'), false, `${ds.key}: the column added in it is gone too`);
      }
      assert.match(String((errors[0] as Error).message), /state write refused/);
      assert.match(String((errors[1] as Error).message), /terminat/i);
      // The sink goes on: a new connection, its staging table and column made again.
      const ok = dataset('D47');
      assert.equal(await sink.open(ok), undefined);
      await sink.commit({ dataset: ok, rows: rows(10), state: stateOf('D47', at(9)) });
      await sink.commit({ dataset: ok, rows: rows(20), state: stateOf('D47', at(19)) });
      assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM lender.d47 WHERE fresh_field IS NOT NULL'), 20);
      assert.deepEqual(await sink.open(ok), stateOf('D47', at(19)));
      assert.ok(!exposed(sink, [], errors).includes(pg.password));
    } finally {
      await sink.close();
    }
  });

  test('the password comes from PGPASSWORD, ~/.pgpass or DATABASE_URL and never shows in a target, notice or error', async () => {
    const db = await createDatabase(pg);
    const home = await mkdtemp(join(tmpdir(), 'pgpass-'));
    const errors: unknown[] = [];
    const notices: SinkNotice[] = [];
    const onNotice = (n: SinkNotice) => notices.push(n);
    const { PGPASSWORD: _, ...withoutPassword } = db.env;
    const ds = dataset('D48');
    const tryOpen = async (sink: Sink): Promise<unknown> => {
      try {
        await sink.open(ds);
        return undefined;
      } catch (error) {
        errors.push(error);
        return error;
      } finally {
        await sink.close();
      }
    };
    try {
      // Wrong password.
      const wrong = postgresSink({ connectionString: db.url, env: { ...db.env, PGPASSWORD: `${pg.password}-wrong` }, onNotice });
      const refused = await tryOpen(wrong);
      assert.ok(refused instanceof SinkError);
      assert.match(refused.message, /password authentication failed for user "[^"]+" \(check the password, taken from PGPASSWORD\)$/);
      assert.ok(!refused.message.includes(`${pg.password}-wrong`));
      // The refusal names the source the password came from, and no other.
      const wrongFile = join(home, 'wrong.pgpass');
      await writeFile(wrongFile, `*:*:*:*:${pg.password}-wrong-too\n`, { mode: 0o600 });
      const fromFile = await tryOpen(postgresSink({ connectionString: db.url, env: { ...withoutPassword, PGPASSFILE: wrongFile }, onNotice }));
      assert.match((fromFile as Error).message, new RegExp(`password authentication failed .*\\(check the password, taken from ${wrongFile}\\)$`));
      const wrongUrl = `postgres://${pg.user}:${encodeURIComponent(`${pg.password}-url`)}@127.0.0.1:${pg.port}/${db.database}`;
      const fromDatabaseUrl = await tryOpen(postgresSink({ env: { DATABASE_URL: wrongUrl, HOME: home }, onNotice }));
      assert.match((fromDatabaseUrl as Error).message, /password authentication failed .*\(check the password, taken from DATABASE_URL\)$/);
      assert.ok(!(fromDatabaseUrl as Error).message.includes(`${pg.password}-url`));
      // None at all (HOME without a .pgpass): an error saying where to put it.
      const none = await tryOpen(postgresSink({ connectionString: db.url, env: { ...withoutPassword, HOME: home }, onNotice }));
      assert.ok(none instanceof ConfigError, `a credential not given is the user's to fix: ${String(none)}`);
      // Nor is the connection left open, the server waiting for a password (a minute, by default,
      // with the process held open). Closed a moment after its failure: wait for that, within reason.
      for (const until = Date.now() + 10_000; connectionsTo(pg.port) > 0 && Date.now() < until;) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(connectionsTo(pg.port), 0, 'no connection to the server is left open');
      assert.match((none as Error).message, /asks for a password and none was found: set PGPASSWORD or add a line to ~\/\.pgpass/);
      // ~/.pgpass readable by others: ignored, and said so.
      const pgpass = join(home, '.pgpass');
      await writeFile(pgpass, `127.0.0.1:${pg.port}:${db.database}:${pg.user}:${pg.password}\n`);
      await chmod(pgpass, 0o644);
      const loose = await tryOpen(postgresSink({ connectionString: db.url, env: { ...withoutPassword, HOME: home }, onNotice }));
      assert.match((loose as Error).message, /\.pgpass was ignored: group or others can read it/);
      // ~/.pgpass, mode 600: works; and PGPASSFILE names another file.
      await chmod(pgpass, 0o600);
      assert.equal(await tryOpen(postgresSink({ connectionString: db.url, env: { ...withoutPassword, HOME: home }, onNotice })), undefined);
      assert.equal(await tryOpen(postgresSink({ env: { ...withoutPassword, HOME: '/nonexistent', PGPASSFILE: pgpass }, onNotice })), undefined);
      // DATABASE_URL may carry it (an environment variable, like PGPASSWORD); the target does not.
      const fromUrl = postgresSink({ env: { DATABASE_URL: `postgres://${pg.user}:${encodeURIComponent(pg.password)}@127.0.0.1:${pg.port}/${db.database}`, HOME: home } });
      assert.equal(await tryOpen(fromUrl), undefined);
      assert.equal(fromUrl.target, `postgres://${pg.user}@127.0.0.1:${pg.port}/${db.database} (schema lender)`);
      // In the connection string: refused before connecting.
      assert.throws(() => postgresSink({ connectionString: `postgres://${pg.user}:${pg.password}@127.0.0.1:${pg.port}/${db.database}` }), (error: unknown) => {
        errors.push(error);
        return error instanceof ConfigError;
      });
      // Nothing listening there: the error names the place, not the password.
      const closed = await tryOpen(postgresSink({ connectionString: `postgres://${pg.user}@127.0.0.1:1/${db.database}`, env: db.env }));
      assert.match((closed as Error).message, /postgres:\/\/lender_test@127\.0\.0\.1:1\/.*cannot reach the server \(ECONNREFUSED\)/);
      assert.equal(errors.length, 7);
      assert.ok(notices.some((n) => n.kind === 'table-created'));
      const all = exposed(wrong, notices, errors);
      assert.ok(!all.includes(pg.password), 'no password in any target, notice or error');
      assert.ok(!all.includes(encodeURIComponent(pg.password)));
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  test('pages of new identities go straight into the table; one that meets a stored identity is merged, and the next pages too, for longer after each miss', async () => {
    const db = await createDatabase(pg);
    const ds = dataset('D45');
    const sink = postgresSink({ connectionString: db.url, env: db.env });
    // A row copied straight in is written in the savepoint's subtransaction, so its xmin differs
    // from the state row's, written by the same commit after it; a merged row shares the state's.
    const path = async (id: string): Promise<'straight in' | 'merged'> => {
      const r = await adminQuery<{ row: string; state: string }>(pg,
        'SELECT (SELECT xmin::text FROM lender.d45 WHERE public_id = $1) AS row, (SELECT xmin::text FROM lender._lender_state WHERE key = $2) AS state',
        [id, 'D45'], db.database);
      return r.rows[0]!.row === r.rows[0]!.state ? 'merged' : 'straight in';
    };
    let second = 0;
    const commit = async (ids: string[]) => {
      second += 1;
      await sink.commit({ dataset: ds, rows: ids.map((id) => ({ public_id: id, updated_at: at(second), v: `${id}@${second}` })), state: stateOf('D45', at(second)) });
    };
    try {
      await sink.open(ds);
      const steps: [string[], string, 'straight in' | 'merged'][] = [
        [['a', 'b'], 'a', 'straight in'],
        [['c', 'b'], 'c', 'merged'], // b is stored: the COPY is undone, the page merged; one page skips
        [['d'], 'd', 'merged'],
        [['e'], 'e', 'straight in'],
        [['e'], 'e', 'merged'], // a miss: one page skips
        [['f'], 'f', 'merged'],
        [['f', 'g'], 'g', 'merged'], // a second miss in a row: two pages skip
        [['h'], 'h', 'merged'],
        [['i'], 'i', 'merged'],
        [['j'], 'j', 'straight in'],
      ];
      for (const [i, [ids, probe, want]] of steps.entries()) {
        await commit(ids);
        assert.equal(await path(probe), want, `commit ${i + 1}: ${probe}`);
      }
      const rows = await adminQuery<{ public_id: string; v: string }>(pg, 'SELECT public_id, v FROM lender.d45 ORDER BY 1', [], db.database);
      assert.deepEqual(rows.rows.map((r) => `${r.public_id}=${r.v}`), ['a=a@1', 'b=b@2', 'c=c@2', 'd=d@3', 'e=e@5', 'f=f@7', 'g=g@7', 'h=h@8', 'i=i@9', 'j=j@10']);
    } finally {
      await sink.close();
    }
  });

  test('two sinks on two connections committing overlapping pages at once: no error, the newest versions win', async () => {
    const db = await createDatabase(pg);
    const ds = dataset('D49');
    // 40 pages of 200 rows over 500 keys, each row some version of its key (newer = later instant);
    // the pages are split between the two sinks, so each sink also commits older versions late.
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pages: ExportRow[][] = Array.from({ length: 40 }, () => Array.from({ length: 200 }, () => {
      const key = Math.floor(random() * 500);
      const version = Math.floor(random() * 1000);
      return { public_id: `k${key}`, updated_at: at(version), version };
    }));
    // Each key ends in its newest version, within a page as across pages and sinks.
    const newest = new Map<string, number>();
    for (const row of pages.flat()) newest.set(row.public_id as string, Math.max(newest.get(row.public_id as string) ?? -1, row.version as number));
    const sinks = [0, 1].map(() => postgresSink({ connectionString: db.url, env: db.env }));
    try {
      // Both open the fresh database at once: the schema and tables are made once, without error.
      await Promise.all(sinks.map((s) => s.open(ds)));
      await Promise.all(sinks.map(async (sink, i) => {
        for (let p = i; p < pages.length; p += 2) await sink.commit({ dataset: ds, rows: pages[p]!, state: stateOf('D49', at(p)) });
      }));
    } finally {
      await Promise.all(sinks.map((s) => s.close()));
    }
    const stored = await adminQuery<{ public_id: string; version: string }>(pg, 'SELECT public_id, version FROM lender.d49', [], db.database);
    assert.equal(stored.rows.length, newest.size);
    for (const row of stored.rows) assert.equal(Number(row.version), newest.get(row.public_id), row.public_id);
  });

  test('several processes starting on one fresh database at once create the schema and tables once', async () => {
    const db = await createDatabase(pg);
    const stores = await Promise.all(Array.from({ length: 6 }, () => PgStore.connect({ connectionString: db.url, env: db.env })));
    try {
      await Promise.all(stores.map((s, i) => s.ensureTable(dataset(i % 2 === 0 ? 'D50' : 'D51'))));
      await Promise.all(stores.map((s, i) => s.transaction((tx) => tx.mergeRows(dataset('D50'), [{ public_id: `p${i}`, updated_at: at(i), [`field_${i % 3}`]: i }]))));
      assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM lender.d50'), 6);
      assert.equal(await count(pg, db, "SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'd50' AND column_name LIKE 'field_%'"), 3);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  test('PgStore: a page merged and another row of the caller written in one transaction, or neither', async () => {
    const db = await createDatabase(pg);
    const store = await PgStore.connect({ connectionString: db.url, env: db.env, schema: 'work' });
    try {
      const ds = dataset('D52');
      await store.ensureTable(ds);
      await store.transaction((tx) => tx.query('CREATE TABLE work.leases (id TEXT PRIMARY KEY, done BOOLEAN NOT NULL)'));
      await store.transaction((tx) => tx.query("INSERT INTO work.leases VALUES ('w1', false)"));
      const merged = await store.transaction(async (tx) => {
        const n = await tx.mergeRows(ds, [{ public_id: 'a', updated_at: at(1) }, { public_id: 'b', updated_at: at(1) }, { public_id: 'a', updated_at: at(2) }]);
        await tx.mergeRows(ds, [{ public_id: 'c', updated_at: at(3) }]);
        const lease = await tx.query<{ done: boolean }>("UPDATE work.leases SET done = true WHERE id = 'w1' RETURNING done");
        assert.equal(lease.rows[0]!.done, true);
        return n;
      });
      assert.equal(merged, 2, 'distinct identities of the first page');
      assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM work.d52'), 3);
      await assert.rejects(store.transaction(async (tx) => {
        await tx.mergeRows(ds, [{ public_id: 'd', updated_at: at(4) }]);
        await tx.query("UPDATE work.leases SET done = false WHERE id = 'w1'");
        throw new Error('lease lost');
      }), /lease lost/);
      assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM work.d52'), 3);
      assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM work.leases WHERE done'), 1);
      assert.equal(store.target, `postgres://${pg.user}@127.0.0.1:${pg.port}/${db.database} (schema work)`);
    } finally {
      await store.close();
    }
  });

  test('lender sync --to postgres://USER@HOST:PORT/DB with PGPASSWORD; a password in --to is refused unechoed', async () => {
    const db = await createDatabase(pg);
    const home = await mkdtemp(join(tmpdir(), 'lender-cli-pg-'));
    try {
      const env = { ...db.env, PGDATABASE: 'not-this-one', HOME: home, LENDER_CREDENTIALS_FILE: join(home, 'none.json') };
      const io = memoryIo(env);
      const code = await main(['sync', '--sandbox', '--to', db.url, '--datasets', 'D07,D26'], io);
      assert.equal(code, 0, io.err());
      const out = JSON.parse(io.out().trim()) as { to: string; datasets: Record<string, { rows: number; location: string }> };
      assert.equal(out.to, `${db.url} (schema lender)`);
      for (const [dataset, table] of [['D07', 'd07'], ['D26', 'd26']] as const) {
        assert.ok(out.datasets[dataset]!.rows > 0);
        assert.equal(out.datasets[dataset]!.location, `lender.${table}`);
        assert.equal(await count(pg, db, `SELECT count(*) AS n FROM lender.${table}`), out.datasets[dataset]!.rows);
      }
      assert.ok(!io.out().includes(pg.password) && !io.err().includes(pg.password));

      // No password anywhere: a configuration mistake, exit 2, as missing lender credentials are.
      const { PGPASSWORD: _, ...withoutPassword } = env;
      const unset = memoryIo(withoutPassword);
      assert.equal(await main(['sync', '--sandbox', '--to', db.url, '--datasets', 'D07'], unset), 2, unset.err());
      assert.match(unset.err(), /^lender sync: PostgreSQL at postgres:\/\/\S+ asks for a password and none was found: set PGPASSWORD or add a line to ~\/\.pgpass$/m);

      const secret = 'cli-secret-pw-123';
      const refused = memoryIo(env);
      const refusedCode = await main(['sync', '--sandbox', '--to', `postgres://${pg.user}:${secret}@127.0.0.1:${pg.port}/${db.database}`, '--datasets', 'D07'], refused);
      assert.notEqual(refusedCode, 0);
      assert.match(refused.err(), /PGPASSWORD or ~\/\.pgpass/);
      assert.ok(!refused.err().includes(secret) && !refused.out().includes(secret), refused.err());
      for (const to of [`postgres:${pg.user}:${secret}@127.0.0.1/${db.database}`, `postgres:/${pg.user}:${secret}@127.0.0.1/${db.database}`,
        `postgres://${pg.user}:${secret}/x@127.0.0.1:${pg.port}/${db.database}`, `postgres://${pg.user}:2024?${secret}@127.0.0.1:${pg.port}/${db.database}`]) {
        const malformed = memoryIo(env);
        assert.equal(await main(['sync', '--sandbox', '--to', to, '--datasets', 'D07'], malformed), 2, malformed.err());
        assert.match(malformed.err(), /not a PostgreSQL URL|has an '@' after its host/);
        assert.ok(!malformed.err().includes(secret) && !malformed.out().includes(secret), malformed.err());
      }
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  test('a table made by hand without a unique index on its identity alone is refused before anything is written; with one, rows merge', async () => {
    const db = await createDatabase(pg);
    await adminQuery(pg, `CREATE SCHEMA a;
      CREATE TABLE a.d07 (public_id text, amount text, note text, _mismatched jsonb);
      CREATE TABLE a.d16 (_row_key text, public_id text, updated_at timestamptz, _mismatched jsonb);
      CREATE TABLE a.d53 (public_id text, updated_at timestamptz, v text, _mismatched jsonb);
      CREATE UNIQUE INDEX d53_pair ON a.d53 (public_id, v);
      CREATE UNIQUE INDEX d53_some ON a.d53 (public_id) WHERE v IS NOT NULL;`, [], db.database);
    const sink = postgresSink({ connectionString: db.url, env: db.env, schema: 'a' });
    try {
      await assert.rejects(sync(f.client, ['D07', 'D16'], { to: sink, limit: 200 }), (error: unknown) => {
        assert.ok(error instanceof SyncError, String(error));
        assert.match(error.failures.D07!.message,
          /^the table a\.d07 in postgres:\/\/.* has no primary key or unique index on public_id alone, .*: CREATE UNIQUE INDEX ON a\.d07 \(public_id\)$/);
        // A dataset told apart by content is keyed by _row_key: the same check, on that column.
        assert.match(error.failures.D16!.message, /has no primary key or unique index on _row_key alone, .*: CREATE UNIQUE INDEX ON a\.d16 \(_row_key\)$/);
        return true;
      });
      // An index over two columns, or over some rows only, is no key of public_id.
      await assert.rejects(sink.open(dataset('D53')), /CREATE UNIQUE INDEX ON a\.d53 \(public_id\)/);
    } finally {
      await sink.close();
    }
    for (const table of ['d07', 'd16', 'd53']) assert.equal(await count(pg, db, `SELECT count(*) AS n FROM a.${table}`), 0, `${table}: nothing written`);
    assert.deepEqual([...(await columnTypes(pg, db, 'd07', 'a')).keys()].sort(), ['_mismatched', 'amount', 'note', 'public_id'], 'no column added');

    // As the message says (or with a primary key): the same sync loads, and a changed row replaces its version.
    await adminQuery(pg, 'CREATE UNIQUE INDEX ON a.d07 (public_id); ALTER TABLE a.d16 ADD PRIMARY KEY (_row_key)', [], db.database);
    const again = postgresSink({ connectionString: db.url, env: db.env, schema: 'a' });
    try {
      const summary = await sync(f.client, ['D07', 'D16'], { to: again, limit: 200 });
      assert.ok(summary.D07!.rows > 0 && summary.D16!.rows > 0);
      const d07 = { ...dataset('D07'), key: 'D07' };
      const [row] = (await adminQuery<{ public_id: string }>(pg, 'SELECT public_id FROM a.d07 LIMIT 1', [], db.database)).rows;
      await again.commit({ dataset: d07, rows: [{ public_id: row!.public_id, updated_at: '2099-01-01T00:00:00Z', note: 'changed' }], state: stateOf('D07', '2099-01-01T00:00:00Z') });
    } finally {
      await again.close();
    }
    assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM a.d07'), await count(pg, db, 'SELECT count(DISTINCT public_id) AS n FROM a.d07'));
    assert.equal(await count(pg, db, "SELECT count(*) AS n FROM a.d07 WHERE note = 'changed'"), 1);
    assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM a.d16'), await count(pg, db, 'SELECT count(DISTINCT _row_key) AS n FROM a.d16'));
  });

  test('a table made by hand: _mismatched is added when missing; without its identity column it is refused; a failing row never shows in an error', async () => {
    const db = await createDatabase(pg);
    await adminQuery(pg, `CREATE SCHEMA a;
      CREATE TABLE a.d54 (public_id text PRIMARY KEY, updated_at timestamptz, n bigint);
      CREATE TABLE a.d55 (id serial PRIMARY KEY, updated_at timestamptz, _mismatched jsonb);
      CREATE TABLE a.d56 (public_id text PRIMARY KEY, updated_at timestamptz, owner_name text NOT NULL, _mismatched jsonb);
      CREATE TABLE a.d58 (public_id text PRIMARY KEY, updated_at timestamptz, born date, _mismatched jsonb);`, [], db.database);
    const notices: SinkNotice[] = [];
    const sink = postgresSink({ connectionString: db.url, env: db.env, schema: 'a', onNotice: (n) => notices.push(n) });
    const secret = 'Jane Q. Private, 12 Hidden Lane';
    const errors: unknown[] = [];
    try {
      await sink.open(dataset('D54'));
      await sink.commit({ dataset: dataset('D54'), rows: [{ public_id: 'p1', updated_at: at(1), n: 'many' }, { public_id: 'p2', updated_at: at(1), n: 2 }], state: stateOf('D54', at(1)) });
      assert.deepEqual(notices.map((n) => n.message), [
        'a.d54: new column _mismatched (json)',
        'a.d54: n had a text value in a bigint column; such values are kept in _mismatched',
      ]);
      await assert.rejects(sink.open(dataset('D55')), (error: unknown) => {
        errors.push(error);
        return error instanceof SinkError && /^the table a\.d55 in .* has no column public_id, so its rows cannot be told apart; it was not made by lender sync: rename or drop it\.$/.test(error.message);
      });
      await sink.open(dataset('D56'));
      await assert.rejects(sink.commit({ dataset: dataset('D56'), rows: [{ public_id: 'p1', updated_at: at(1), note: secret }], state: stateOf('D56', at(1)) }), (error: unknown) => {
        errors.push(error);
        return error instanceof SinkError && /null value in column "owner_name"/.test(error.message);
      });
      // A column of a type the sink does not make (date) takes its values, copied straight in or
      // merged over a stored row (staged in a column of its own type); one it refuses fails the
      // page without the server's message quoting the value, either way.
      const d58 = dataset('D58');
      await sink.open(d58);
      await sink.commit({ dataset: d58, rows: [{ public_id: 'p1', updated_at: at(1), born: '1971-01-01' }], state: stateOf('D58', at(1)) });
      // The service's dd/MM/yyyy, read day first (the server's default would read month first).
      await sink.commit({ dataset: d58, rows: [{ public_id: 'p1', updated_at: at(2), born: '05/03/1980' }, { public_id: 'p3', updated_at: at(2), born: '31/12/1980' }], state: stateOf('D58', at(2)) });
      for (const id of ['p2', 'p1']) {
        await assert.rejects(sink.commit({ dataset: d58, rows: [{ public_id: id, updated_at: at(3), born: secret }], state: stateOf('D58', at(3)) }), (error: unknown) => {
          errors.push(error);
          return error instanceof SinkError && /invalid input syntax for type date: … \(column born; the rest is left out: it may quote the value\)$/.test(error.message);
        });
      }
    } finally {
      await sink.close();
    }
    const rows = await adminQuery<{ public_id: string; n: string | null; _mismatched: unknown }>(pg, 'SELECT public_id, n, _mismatched FROM a.d54 ORDER BY 1', [], db.database);
    assert.deepEqual(rows.rows, [{ public_id: 'p1', n: null, _mismatched: { n: 'many' } }, { public_id: 'p2', n: '2', _mismatched: null }]);
    assert.equal(await count(pg, db, 'SELECT count(*) AS n FROM a.d56'), 0);
    const born = await adminQuery<{ public_id: string; born: string }>(pg, "SELECT public_id, to_char(born, 'YYYY-MM-DD') AS born FROM a.d58", [], db.database);
    assert.deepEqual(born.rows.sort((a, b) => a.public_id.localeCompare(b.public_id)), [{ public_id: 'p1', born: '1980-03-05' }, { public_id: 'p3', born: '1980-12-31' }]);
    const shown = exposed(sink, notices, errors);
    assert.ok(!shown.includes(secret) && !shown.includes('Failing row'), shown);
  });

  test('columns made narrower by hand (smallint, integer, varchar(n), char(n), numeric(p,s)): values beyond them go to _mismatched, told once; a bounded identity column is refused', async () => {
    const db = await createDatabase(pg);
    await adminQuery(pg, `CREATE SCHEMA a;
      CREATE TABLE a.d57 (public_id text PRIMARY KEY, updated_at timestamptz, small smallint, mid integer, code varchar(5), fixed char(3), price numeric(5,2), exact numeric(30,12), _mismatched jsonb);
      CREATE TABLE a.d58 (public_id varchar(10) PRIMARY KEY, updated_at timestamptz, _mismatched jsonb);`, [], db.database);
    const notices: SinkNotice[] = [];
    const sink = postgresSink({ connectionString: db.url, env: db.env, schema: 'a', onNotice: (n) => notices.push(n) });
    const ds = dataset('D57');
    try {
      await sink.open(ds);
      await sink.commit({ dataset: ds, state: stateOf('D57', at(2)), rows: [
        // At the bounds: five characters, one of them beyond U+FFFF (two UTF-16 units).
        { public_id: 'p1', updated_at: at(1), small: 32767, mid: -2147483648, code: 'ab😀de', fixed: 'abc', price: -999.99 },
        { public_id: 'p2', updated_at: at(1), small: 32768, mid: 2147483648, code: 'abcdef', fixed: 'abcd', price: 1000 },
        // A trailing space PostgreSQL would cut silently is kept too, and a decimal it would round.
        { public_id: 'p3', updated_at: at(2), small: -32769, mid: 7, code: 'abcde ', price: 1.234 },
      ] });
      await sink.commit({ dataset: ds, state: stateOf('D57', at(3)), rows: [{ public_id: 'p4', updated_at: at(3), small: 99999, code: 'toolong' }] });
      // Merged over stored rows (staged in numeric(30,12), not double precision): every digit kept.
      await sink.commit({ dataset: ds, state: stateOf('D57', at(4)), rows: [{ public_id: 'p4', updated_at: at(4), small: 99999, code: 'toolong', exact: 123456.78901234568 }] });
      await assert.rejects(sink.open(dataset('D58')),
        /the table a\.d58 in .* has its identity column public_id as character varying\(10\), .*: ALTER TABLE a\.d58 ALTER COLUMN public_id TYPE text$/);
    } finally {
      await sink.close();
    }
    const exact = await adminQuery<{ exact: string }>(pg, "SELECT exact::text AS exact FROM a.d57 WHERE public_id = 'p4'", [], db.database);
    // As the row's number writes itself (17 digits), where a double precision stage keeps 15 (123456.789012346).
    assert.equal(exact.rows[0]!.exact.replace(/0+$/, ''), String(123456.78901234568));
    const rows = await adminQuery(pg, 'SELECT public_id, small, mid, code, fixed, price, _mismatched FROM a.d57 ORDER BY 1', [], db.database);
    assert.deepEqual(rows.rows, [
      { public_id: 'p1', small: 32767, mid: -2147483648, code: 'ab😀de', fixed: 'abc', price: '-999.99', _mismatched: null },
      { public_id: 'p2', small: null, mid: null, code: null, fixed: null, price: null, _mismatched: { small: 32768, mid: 2147483648, code: 'abcdef', fixed: 'abcd', price: 1000 } },
      { public_id: 'p3', small: null, mid: 7, code: null, fixed: null, price: null, _mismatched: { small: -32769, code: 'abcde ', price: 1.234 } },
      { public_id: 'p4', small: null, mid: null, code: null, fixed: null, price: null, _mismatched: { small: 99999, code: 'toolong' } },
    ]);
    assert.deepEqual(notices.map((n) => n.message), [
      ['small', 'smallint'], ['mid', 'integer'], ['code', 'character varying(5)'], ['fixed', 'character(3)'], ['price', 'numeric(5,2)'],
    ].map(([name, type]) => `a.d57: ${name} had a value that does not fit its ${type} column; such values are kept in _mismatched`));
  });

  test('a schema name out of bounds and a lease outside 100 ms to 24 hours are ConfigErrors, before anything connects', () => {
    for (const schema of ['', 'x'.repeat(64)]) {
      assert.throws(() => postgresSink({ connectionString: 'postgres://u@127.0.0.1:1/db', schema }),
        (error: unknown) => error instanceof ConfigError && /^the PostgreSQL schema must be a name of 1 to 63 bytes/.test(error.message));
    }
    for (const [lease, message] of [[50, /^lease must be at least 100 ms, not 50$/], ['10000h', /^lease must be at most 24h \(86400000 ms\), not '10000h'$/],
      [{ hours: 25 }, /^lease must be at most 24h/]] as const) {
      assert.throws(() => postgresSink({ connectionString: 'postgres://u@127.0.0.1:1/db', lease }),
        (error: unknown) => error instanceof ConfigError && message.test(error.message));
    }
    assert.doesNotThrow(() => postgresSink({ connectionString: 'postgres://u@127.0.0.1:1/db', lease: '24h', schema: 'x'.repeat(63) }));
  });

  test('a dataset the service does not make available leaves no table; the others are loaded', async () => {
    const db = await createDatabase(pg);
    const sink = postgresSink({ connectionString: db.url, env: db.env });
    try {
      await assert.rejects(sync(f.client, ['D04', 'D26'], { to: sink, limit: 200 }), (error: unknown) => {
        assert.ok(error instanceof SyncError, String(error));
        assert.deepEqual(Object.keys(error.failures), ['D04']);
        return true;
      });
    } finally {
      await sink.close();
    }
    const tables = await adminQuery<{ d04: string | null; d26: string | null }>(pg, "SELECT to_regclass('lender.d04')::text AS d04, to_regclass('lender.d26')::text AS d26", [], db.database);
    assert.deepEqual(tables.rows[0], { d04: null, d26: 'lender.d26' });
    assert.ok(await count(pg, db, 'SELECT count(*) AS n FROM lender.d26') > 0);
  });

  test('the summary names each table as it is typed in SQL: a schema in mixed case or a reserved word quoted', async () => {
    const db = await createDatabase(pg);
    for (const [schema, shown] of [['Mixed Case', '"Mixed Case".d26'], ['user', '"user".d26'], ['plain_1', 'plain_1.d26']] as const) {
      const sink = postgresSink({ connectionString: db.url, env: db.env, schema });
      try {
        const summary = await sync(f.client, ['D26'], { to: sink, limit: 200 });
        assert.equal(summary.D26!.location, shown);
        // Pasted into a statement as it is, it names the table the rows went to.
        assert.equal(await count(pg, db, `SELECT count(*) AS n FROM ${shown}`), summary.D26!.rows);
      } finally {
        await sink.close();
      }
    }
  });

  test('a cause every dataset fails of (a schema the user may not write to) is said once, with the datasets it failed', async () => {
    const db = await createDatabase(pg);
    const sink = postgresSink({ connectionString: db.url, env: db.env, schema: 'pg_toast' });
    try {
      await assert.rejects(sync(f.client, ['D07', 'D26', 'D03'], { to: sink, limit: 200 }), (error: unknown) => {
        assert.ok(error instanceof SyncError, String(error));
        assert.deepEqual(Object.keys(error.failures), ['D07', 'D26', 'D03']);
        const cause = error.failures.D07!.message;
        assert.match(cause, /permission denied/);
        assert.equal(error.message, `All 3 datasets failed to sync: D07, D26, D03 (${cause}). Run the sync again once the cause is fixed.`);
        return true;
      });
    } finally {
      await sink.close();
    }
    const io = memoryIo({ ...db.env, LENDER_CREDENTIALS_FILE: join(tmpdir(), 'lender-none.json') });
    assert.equal(await main(['sync', '--sandbox', '--to', db.url, '--schema', 'pg_toast', '--datasets', 'D07,D26'], io), 1, io.err());
    const failed = io.err().split('\n').filter((line) => line.includes(' failed: '));
    assert.equal(failed.length, 1, io.err());
    assert.match(failed[0]!, /^lender sync: D07, D26 failed: PostgreSQL at .*permission denied/);
  });

  test('a table or column another process committed while this one waited for the schema lock is learnt, not made again nor told as new', async () => {
    const db = await createDatabase(pg);
    const told = { a: [] as SinkNotice[], b: [] as SinkNotice[] };
    const a = await PgStore.connect({ connectionString: db.url, env: db.env, onNotice: (n) => told.a.push(n) });
    const b = await PgStore.connect({ connectionString: db.url, env: db.env, onNotice: (n) => told.b.push(n) });
    // `a` runs `work` in a transaction held open (the schema lock with it) until `b`, having looked
    // for what `work` made and not found it, waits for the lock; then `a` commits.
    const race = async (work: (tx: PgTransaction) => Promise<unknown>, other: () => Promise<unknown>) => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let holding!: () => void;
      const held = new Promise<void>((resolve) => (holding = resolve));
      const first = a.transaction(async (tx) => {
        await work(tx);
        holding();
        await gate;
      });
      await held;
      const second = other();
      await waitForLockWaiters(pg, db);
      release();
      await Promise.all([first, second]);
    };
    try {
      const fresh = dataset('D59');
      await race((tx) => tx.ensureTable(fresh), () => b.ensureTable(fresh));
      assert.deepEqual(told.a.map((n) => n.message), ['lender.d59: new table']);
      assert.deepEqual(told.b.map((n) => n.message), [], 'the table is not new to the second process');
      told.a.length = 0;
      const ds = dataset('D60');
      await PgStore.connect({ connectionString: db.url, env: db.env }).then(async (s) => {
        await s.ensureTable(ds);
        await s.close();
      });
      await a.ensureTable(ds);
      await b.ensureTable(ds);
      await race((tx) => tx.mergeRows(ds, [{ public_id: 'p1', updated_at: at(1), extra: 1 }]),
        () => b.transaction((tx) => tx.mergeRows(ds, [{ public_id: 'p2', updated_at: at(2), extra: 'two' }])));
      assert.deepEqual(told.a.map((n) => n.message), ['lender.d60: new column extra (bigint)']);
      assert.deepEqual(told.b.map((n) => n.message), ['lender.d60: extra had a text value in a bigint column; such values are kept in _mismatched']);
    } finally {
      await a.close();
      await b.close();
    }
    const log = await adminQuery<{ n: string }>(pg, "SELECT count(*) AS n FROM pg_attribute WHERE attrelid = 'lender.d60'::regclass AND attname = 'extra'", [], db.database);
    assert.equal(Number(log.rows[0]!.n), 1);
  });

  test('a connection lost in the middle of a statement is told as lost, not as a server that cannot be reached', async () => {
    const db = await createDatabase(pg);
    // A TCP relay in front of the cluster, whose client side is reset (RST) while a statement runs.
    const sockets = new Set<Socket>();
    const relay = createServer((client) => {
      const server = connect(pg.port, pg.host);
      sockets.add(client);
      client.on('error', () => server.destroy());
      server.on('error', () => client.destroy());
      client.pipe(server).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as AddressInfo).port;
    const store = await PgStore.connect({ connectionString: `postgres://${pg.user}@127.0.0.1:${port}/${db.database}`, env: db.env });
    try {
      const running = store.transaction((tx) => tx.query('SELECT pg_sleep(60)'));
      running.catch(() => undefined);
      for (;;) {
        const active = await count(pg, db, "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND query = 'SELECT pg_sleep(60)' AND state = 'active'", [db.database]);
        if (active > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      for (const socket of sockets) socket.resetAndDestroy();
      await assert.rejects(running, (error: unknown) => error instanceof SinkError &&
        /^PostgreSQL at postgres:\/\/.*: a statement failed: the connection to the server was lost \(ECONNRESET\)/.test(error.message));
    } finally {
      await store.close().catch(() => undefined);
      relay.close();
      await adminQuery(pg, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query = 'SELECT pg_sleep(60)'", [db.database]);
    }
  });
});
