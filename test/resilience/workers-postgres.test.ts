// Three `lender sync --to postgres://…` processes share one backfill through the lease tables of
// a real PostgreSQL database; one is SIGKILLed midway and started again. Every process exits 0,
// the tables equal the reference walk of the sandbox, and the lease table shows each part
// completed once, its committed rows summing to the dataset's rows (no part loaded twice) and
// the work spread over more than one worker. Then, after the sandbox changed rows, two workers run
// the incremental load: every row once, in its latest version. And a worker frozen past its lease
// has its part taken over, and its commits after that refused.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { LenderClient } from '../../src/client/client.ts';
import type { DatasetRef } from '../../src/core/types.ts';
import { identityFor } from '../../src/exports/highwater.ts';
import { datasetInfo } from '../../src/core/catalog.ts';
import { keyColumnOf, tableIdentity } from '../helpers/crash-sync.ts';
import { adminQuery, createDatabase, startPostgres, type PgCluster, type PgDatabase } from '../helpers/postgres.ts';
import { SecretScan, spawnLender, startSandboxChild, type SandboxChild } from '../helpers/resilience.ts';
import { EVERYTHING, plainWalk } from '../helpers/plain-walk.ts';

const DATASETS = ['D07', 'D03', 'D21', 'D16', 'D26'];

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; exit: Promise<Exit> } {
  const child = spawnLender(args, { env });
  child.stdin!.end();
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exit = (once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>).then(([code, signal]) => ({ code, signal, stdout, stderr }));
  return { child, exit };
}

describe('workers sharing a backfill through PostgreSQL leases', () => {
  let cluster: PgCluster;
  let db: PgDatabase;
  let sandbox: SandboxChild;
  const scan = new SecretScan();

  before(async () => {
    cluster = await startPostgres();
    scan.secret(cluster.password);
    db = await createDatabase(cluster);
    sandbox = await startSandboxChild(['--seed', '23', '--scale', '600', '--latency', '30', '--faults', '500=0.02']);
    for (const l of sandbox.info.lenders) scan.secret(l.password);
  });
  after(async () => {
    await sandbox?.stop();
    await cluster?.stop();
  });

  const args = () => ['sync', '--to', db.url, '--datasets', DATASETS.join(','), '--limit', '40', '--lease', '2s'];
  const env = () => ({ ...sandbox.env('demo'), ...db.env });

  async function tableIdentities(code: string): Promise<string[]> {
    const cursor = datasetInfo(code)!.cursorField;
    const key = keyColumnOf(code);
    const { rows } = await adminQuery<{ id: string }>(cluster,
      `SELECT "${key}" || '|' || to_char("${cursor}" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS id FROM lender.${code.toLowerCase()}`,
      [], db.database);
    return rows.map((r) => r.id).sort();
  }

  async function reference(): Promise<Map<string, string[]>> {
    const client = await LenderClient.login({ authUrl: sandbox.info.authUrl, ...sandbox.info.lenders[0]!, ca: readFileSync(sandbox.info.caFile, 'utf8') });
    try {
      const out = new Map<string, string[]>();
      for (const code of DATASETS) out.set(code, (await plainWalk(client, code as DatasetRef, EVERYTHING)).map((r) => tableIdentity(code, r)).sort());
      return out;
    } finally {
      await client.close();
    }
  }

  it('three workers, one killed and restarted: tables equal the reference, no part loaded twice', async (ctx) => {
    const workers = [start(args(), env()), start(args(), env()), start(args(), env())];
    // The worker holding D07's one part (about 15 pages) is killed once it has committed a few:
    // that part must be taken over and finished from its last commit, not loaded again.
    let victim: (typeof workers)[number] | undefined;
    for (let i = 0; victim === undefined; i++) {
      assert.ok(i < 3000, 'no worker was seen holding the D07 part with a few pages committed');
      const { rows } = await adminQuery<{ n: string }>(cluster,
        `SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'lender' AND tablename = '_lender_parts'`, [], db.database);
      if (Number(rows[0]!.n) > 0) {
        const { rows: held } = await adminQuery<{ pid: string }>(cluster,
          `SELECT split_part(owner, ':', 2) AS pid FROM lender._lender_parts WHERE key = 'D07' AND status = 'leased' AND pages BETWEEN 1 AND 5`,
          [], db.database);
        victim = workers.find((w) => held.some((h) => h.pid === String(w.child.pid)));
      }
      if (victim === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    victim.child.kill('SIGKILL');
    const killed = await victim.exit;
    assert.equal(killed.signal, 'SIGKILL', 'the victim was still working when killed');
    const restarted = start(args(), env());
    const exits = await Promise.all([...workers.filter((w) => w !== victim).map((w) => w.exit), restarted.exit]);
    for (const [i, e] of exits.entries()) {
      scan.capture(`worker ${i} stdout`, e.stdout);
      scan.capture(`worker ${i} stderr`, e.stderr);
      assert.equal(e.code, 0, `worker ${i} failed: ${e.stderr.slice(-800)}`);
    }

    await sandbox.request('POST', '/__sandbox/faults', { body: { latencyMs: 0, faults: {} } });
    const expected = await reference();
    const { rows: parts } = await adminQuery<{ key: string; status: string; completions: number; rows: string; claims: number; finished_by: string }>(cluster,
      'SELECT key, status, completions, rows, claims, finished_by FROM lender._lender_parts', [], db.database);
    for (const code of DATASETS) {
      assert.deepEqual(await tableIdentities(code), expected.get(code), `${code}: the table differs from the service's rows`);
      const mine = parts.filter((p) => p.key === code);
      assert.ok(mine.length >= 1);
      assert.deepEqual(mine.filter((p) => p.status !== 'done' || p.completions !== 1), [], `${code}: every part completed exactly once`);
      const committed = mine.reduce((n, p) => n + Number(p.rows), 0);
      assert.equal(committed, expected.get(code)!.length, `${code}: rows committed across parts equal the dataset's rows (no page committed twice)`);
    }
    const finishers = new Set(parts.map((p) => p.finished_by));
    assert.ok(finishers.size >= 2, `the parts were completed by ${finishers.size} worker(s); the work was not shared`);
    const retaken = parts.filter((p) => p.claims > 1).length;
    assert.ok(retaken >= 1, 'the part the victim held was claimed again');
    ctx.diagnostic(`parts=${parts.length} finishedBy=${finishers.size} workers, parts claimed again after the kill=${retaken}`);
  });

  it('after the service changed rows, two workers load the increment: every row once, in its latest version', async () => {
    const advanced = await sandbox.request('POST', '/__sandbox/advance');
    assert.equal(advanced.status, 200);
    const workers = [start(args(), env()), start(args(), env())];
    for (const w of workers) {
      const e = await w.exit;
      scan.capture('incremental worker', e.stdout + e.stderr);
      assert.equal(e.code, 0, e.stderr.slice(-800));
    }
    const expected = await reference();
    for (const code of DATASETS) {
      const table = await tableIdentities(code);
      if (identityFor(code) === 'key') {
        assert.deepEqual(table, expected.get(code), `${code}: after the incremental load`);
        continue;
      }
      // D16 exports no per-row identity that survives an update (public_id is the case, shared by
      // deals): each version is a row of its own, so a changed deal leaves its older version
      // beside the new one. Every current row is there once; anything more is an older version
      // of a case that has a newer one.
      const current = new Set(expected.get(code));
      assert.equal(new Set(table).size, table.length, `${code}: no row twice`);
      for (const id of current) assert.ok(table.includes(id), `${code}: ${id} is in the table`);
      const newest = new Map<string, string>();
      for (const id of current) {
        const [key, at] = [id.slice(0, id.indexOf('#')), id.slice(id.lastIndexOf('|') + 1)];
        if ((newest.get(key) ?? '') < at) newest.set(key, at);
      }
      for (const id of table.filter((x) => !current.has(x))) {
        const [key, at] = [id.slice(0, id.indexOf('#')), id.slice(id.lastIndexOf('|') + 1)];
        assert.ok((newest.get(key) ?? '') > at, `${code}: ${id} is neither current nor an older version of a changed case`);
      }
    }
  });

  it('a worker frozen past its lease (alive, so not expired early): its part is taken over and its later commits refused', async () => {
    const frozenDb = await createDatabase(cluster);
    const frozenArgs = ['sync', '--to', frozenDb.url, '--datasets', 'D07', '--limit', '40', '--lease', '2s'];
    const frozenEnv = { ...sandbox.env('demo'), ...frozenDb.env };
    const parts = async () => (await adminQuery<{ owner: string | null; status: string; pages: number; rows: string; claims: number; completions: number; finished_by: string | null }>(cluster,
      `SELECT owner, status, pages, rows, claims, completions, finished_by FROM lender._lender_parts WHERE key = 'D07'`, [], frozenDb.database)).rows;
    const tableThere = async () => Number((await adminQuery<{ n: string }>(cluster,
      `SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'lender' AND tablename = '_lender_parts'`, [], frozenDb.database)).rows[0]!.n) > 0;
    // Frozen between transactions: one frozen inside its commit would hold the part's row lock,
    // and the lease could not be taken over before it thawed (as with any client stuck mid-transaction).
    const busyBackends = async () => Number((await adminQuery<{ n: string }>(cluster,
      `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state IS DISTINCT FROM 'idle'`,
      [frozenDb.database], frozenDb.database)).rows[0]!.n);

    // Pages slow enough that the worker spends most of its time waiting for the service, outside
    // any transaction.
    await sandbox.request('POST', '/__sandbox/faults', { body: { latencyMs: 250, faults: {} } });
    const frozen = start(frozenArgs, frozenEnv);
    let exited = false;
    void frozen.exit.then(() => { exited = true; });
    for (;;) {
      assert.ok(!exited, 'the worker was never seen between transactions holding D07 with a few pages committed');
      const held = (await tableThere()) && (await parts()).some((p) => p.status === 'leased' && p.owner?.split(':')[1] === String(frozen.child.pid) && p.pages >= 1 && p.pages <= 8);
      if (held) {
        frozen.child.kill('SIGSTOP');
        // A statement sent just before the stop reaches its backend within moments: look again after.
        await new Promise((r) => setTimeout(r, 100));
        if ((await busyBackends()) === 0) break;
        frozen.child.kill('SIGCONT');
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const other = start(frozenArgs, frozenEnv);
    let raced: Exit | 'stuck';
    try {
      // Bounded: were the frozen worker inside a transaction after all, the other could not take its part.
      raced = await Promise.race([other.exit, new Promise<'stuck'>((r) => setTimeout(() => r('stuck'), 60_000).unref())]);
    } finally {
      frozen.child.kill('SIGCONT');
    }
    const otherExit = await other.exit;
    const frozenExit = await frozen.exit;
    assert.notEqual(raced, 'stuck', 'the second worker did not finish within 60 s while the first was frozen');
    for (const [name, e] of [['the worker that took over', otherExit], ['the frozen worker', frozenExit]] as const) {
      scan.capture(name, e.stdout + e.stderr);
      assert.equal(e.code, 0, `${name} failed: ${e.stderr.slice(-800)}`);
    }

    await sandbox.request('POST', '/__sandbox/faults', { body: { latencyMs: 0, faults: {} } });
    const expected = (await reference()).get('D07')!;
    const [part, ...more] = await parts();
    assert.equal(more.length, 0, 'D07 is one part');
    assert.ok(part!.claims >= 2, `the part was taken over (claims: ${part!.claims})`);
    assert.equal(part!.completions, 1);
    assert.equal(part!.finished_by?.split(':')[1], String(other.child.pid), 'the worker that took it over finished it');
    // The frozen worker's commits after the takeover were refused: the rows committed to the part
    // are the dataset's rows exactly once, and so are the rows each worker reports it stored.
    assert.equal(Number(part!.rows), expected.length);
    const reported = [otherExit, frozenExit].map((e) => (JSON.parse(e.stdout.trim()) as { datasets: Record<string, { rows: number }> }).datasets.D07?.rows ?? 0);
    assert.equal(reported[0]! + reported[1]!, expected.length, `rows reported stored: ${reported.join(' + ')}`);
    const cursor = datasetInfo('D07')!.cursorField;
    const { rows } = await adminQuery<{ id: string }>(cluster,
      `SELECT public_id || '|' || to_char("${cursor}" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS id FROM lender.d07`, [], frozenDb.database);
    assert.deepEqual(rows.map((r) => r.id).sort(), expected);
  });

  it('printed no password or token', () => {
    assert.ok(scan.count > 0);
    assert.deepEqual(scan.leaks(), []);
  });
});
