// The throwaway PostgreSQL cluster of the tests (test/helpers/postgres.ts): password required,
// 127.0.0.1 only, fsync on, a taken port tried again elsewhere, nothing left behind by stop(),
// and an error that says how to install the server when its binaries are missing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { adminQuery, createDatabase, postgresBinDir, startPostgres, type PgCluster } from '../helpers/postgres.ts';

let cluster: PgCluster;
before(async () => { cluster = await startPostgres(); });
after(() => cluster?.stop());

test('the cluster asks for the password (scram-sha-256) and listens on 127.0.0.1 only', async () => {
  const wrong = new pg.Client({ host: cluster.host, port: cluster.port, user: cluster.user, password: 'not-the-password', database: 'postgres' });
  await assert.rejects(wrong.connect(), /password authentication failed/);
  await wrong.end().catch(() => undefined);
  const settings = await adminQuery<{ name: string; setting: string }>(
    cluster, "SELECT name, setting FROM pg_settings WHERE name IN ('listen_addresses', 'fsync', 'synchronous_commit', 'password_encryption') ORDER BY name",
  );
  assert.deepEqual(Object.fromEntries(settings.rows.map((r) => [r.name, r.setting])), {
    fsync: 'on', listen_addresses: '127.0.0.1', password_encryption: 'scram-sha-256', synchronous_commit: 'on',
  });
  const hba = await adminQuery<{ auth_method: string }>(cluster, 'SELECT DISTINCT auth_method FROM pg_hba_file_rules');
  assert.deepEqual(hba.rows.map((r) => r.auth_method), ['scram-sha-256']);
  assert.ok(!cluster.url.includes(cluster.password), 'the URL holds no password');
  assert.equal(cluster.env.PGPASSWORD, cluster.password);
});

test('createDatabase gives a fresh, empty database each time', async () => {
  const a = await createDatabase(cluster);
  const b = await createDatabase(cluster);
  assert.notEqual(a.database, b.database);
  assert.equal(a.env.PGDATABASE, a.database);
  const tables = await adminQuery<{ n: string }>(cluster, "SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'", [], a.database);
  assert.equal(tables.rows[0]!.n, '0');
});

test('a port taken between the probe and the start is given up for another; stop() leaves nothing behind', async () => {
  const squatter: Server = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const taken = (squatter.address() as { port: number }).port;
  const tried: number[] = [];
  let first = true;
  const second = await startPostgres({
    nextPort: async () => {
      // The first port offered is held by another listener, as when another process won the race.
      const port = first ? taken : await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const p = (probe.address() as { port: number }).port;
          probe.close(() => resolve(p));
        });
      });
      first = false;
      tried.push(port);
      return port;
    },
  });
  try {
    assert.equal(tried[0], taken);
    assert.equal(tried.length, 2, `ports tried: ${tried.join(', ')}`);
    assert.equal(second.port, tried[1]);
    const r = await adminQuery<{ one: number }>(second, 'SELECT 1 AS one');
    assert.equal(r.rows[0]!.one, 1);
  } finally {
    await new Promise<void>((resolve) => squatter.close(() => resolve()));
  }
  const pidFile = await findDataDir(second);
  await second.stop();
  assert.equal(existsSync(pidFile), false, 'the folder is removed');
  const refused = new pg.Client({ host: second.host, port: second.port, user: second.user, password: second.password, database: 'postgres' });
  await assert.rejects(refused.connect(), /ECONNREFUSED/);
  await refused.end().catch(() => undefined);
});

test('without the server binaries: an error saying how to install them', async () => {
  const empty = await mkdtemp(join(tmpdir(), 'no-pg-'));
  try {
    assert.throws(() => postgresBinDir({ PATH: empty }, join(empty, 'no-such-dir')), /apt-get install -y postgresql/);
    // With them (this machine): found on PATH or under /usr/lib/postgresql.
    assert.ok(existsSync(join(postgresBinDir(), 'initdb')));
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
});

/** The data folder of a running cluster, from the server itself. */
async function findDataDir(c: PgCluster): Promise<string> {
  const r = await adminQuery<{ setting: string }>(c, "SELECT setting FROM pg_settings WHERE name = 'data_directory'");
  const dir = r.rows[0]!.setting;
  assert.ok(readFileSync(join(dir, 'postmaster.pid'), 'utf8').length > 0);
  return dir;
}
