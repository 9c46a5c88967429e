// `lender sync --to duckdb:` SIGKILLed at random instants: on a timer, the instant a commit writes
// the database's write-ahead log (inside the commit of a page and its state), and the instant a
// checkpoint writes the database (as the sink closes DuckDB to open the file again). After every
// kill the database opens; at the end every table equals the reference walk: 0 lost, 0 duplicated.
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { SOAK } from '../helpers/resilience.ts';
import {
  DATASETS, crashAndCompare, fileKill, keyColumnOf, startCrashSandbox, tableIdentity, timerKill, type CrashSandbox,
} from '../helpers/crash-sync.ts';
import { datasetInfo } from '../../src/core/catalog.ts';

const KILLS = SOAK ? 30 : 20;

async function query<R>(path: string, sql: string): Promise<R[]> {
  const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
  try {
    const connection = await instance.connect();
    try {
      return (await connection.runAndReadAll(sql)).getRowObjectsJson() as R[];
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

describe('crash and resume: lender sync --to duckdb: killed with SIGKILL at random instants', () => {
  let env: CrashSandbox;
  let path: string;
  let opened = 0;

  before(async () => {
    env = await startCrashSandbox();
    path = join(env.dir, 'lender.duckdb');
  });
  after(async () => env?.stop());

  it(`survives ${KILLS} kills: every table equals the service's rows, each once`, async (ctx) => {
    const run = await crashAndCompare(ctx, env, {
      args: ['--to', `duckdb:${path}`],
      // DuckDB closed and the file opened again every 300 rows (100,000 by default), so that kills
      // land in those moments too.
      env: { LENDER_DUCKDB_REOPEN_ROWS: '300' },
      points: [
        timerKill,
        // A write of the write-ahead log: a commit is in flight.
        fileKill('wal-write', env.dir, (f) => f === 'lender.duckdb.wal', 30),
        // A write of the database itself: a checkpoint, before a reopening or by DuckDB's own.
        fileKill('checkpoint', env.dir, (f) => f === 'lender.duckdb', 10),
      ],
      async afterKill() {
        if (!existsSync(path)) return;
        assert.equal(statSync(path).mode & 0o777, 0o600, 'the database file is owner-only');
        const tables = await query<{ n: number }>(path, 'SELECT count(*)::INTEGER AS n FROM duckdb_tables()');
        assert.ok(tables.length === 1, 'the database opens after a kill');
        opened += 1;
      },
      async readBack(code) {
        const cursor = datasetInfo(code)!.cursorField;
        const rows = await query<{ id: string }>(path,
          `SELECT "${keyColumnOf(code)}" || '|' || strftime(timezone('UTC', "${cursor}"), '%Y-%m-%dT%H:%M:%S.%gZ') AS id FROM ${code.toLowerCase()}`);
        return rows.map((r) => r.id);
      },
      rowIdentity: tableIdentity,
    }, KILLS);
    assert.equal(run.kills, KILLS);
    ctx.diagnostic(`kills=${run.kills} ${JSON.stringify(run.byPoint)} rows=${run.rows} (final run ${run.finalRows}) over ${DATASETS.length} tables lost=0 duplicated=0 openedAfterKill=${opened}`);
  });

  it('printed no password or token', () => {
    assert.ok(env.scan.count > 0);
    assert.deepEqual(env.scan.leaks(), []);
  });
});
