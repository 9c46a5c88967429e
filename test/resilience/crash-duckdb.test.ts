// `lender sync --to duckdb:` SIGKILLed at random instants: on a timer, the instant a commit writes
// the database's write-ahead log (inside the commit of a page and its state), and the instant a
// checkpoint writes the database (as the sink closes DuckDB to open the file again). After every
// kill the database opens; at the end every table equals the reference walk: 0 lost, 0 duplicated,
// and the file has had more checkpoints than the runs could have made without the reopenings.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { SOAK } from '../helpers/resilience.ts';
import {
  DATASETS, crashAndCompare, fileKill, keyColumnOf, startCrashSandbox, tableIdentity, timerKill, type CrashSandbox,
} from '../helpers/crash-sync.ts';
import { datasetInfo } from '../../src/core/catalog.ts';

const KILLS = SOAK ? 30 : 20;
/** LENDER_DUCKDB_REOPEN_ROWS for these runs: DuckDB closed and the file opened again this often. */
const REOPEN_ROWS = 300;

/** How many checkpoints the database file has had in its life: DuckDB's two database headers (at
 * 4 and 8 kB, each after an 8-byte checksum) count them, a checkpoint writing the older one, so
 * after the first they hold n and n - 1. */
function checkpointsOf(path: string): bigint {
  const file = readFileSync(path);
  assert.equal(file.toString('latin1', 8, 12), 'DUCK', 'a DuckDB file');
  const first = file.readBigUInt64LE(4096 + 8);
  const second = file.readBigUInt64LE(8192 + 8);
  assert.equal(first > second ? first - second : second - first, 1n, `DuckDB's headers as this test reads them: ${first}, ${second}`);
  return first > second ? first : second;
}

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
      env: { LENDER_DUCKDB_REOPEN_ROWS: String(REOPEN_ROWS) },
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
    // Without the reopenings, a run may checkpoint as it opens a log a kill left, and does as it
    // closes, which only the final run does: at most kills + 2 in all (1 in a run with them
    // turned off). The reopenings add one every REOPEN_ROWS rows or so, in a load some 50 times
    // that: 37 to 45 in all.
    const checkpoints = checkpointsOf(path);
    assert.ok(checkpoints > BigInt(run.kills + 2),
      `${checkpoints} checkpoints over ${run.kills + 1} runs: the load should have closed and opened DuckDB every ${REOPEN_ROWS} rows`);
    ctx.diagnostic(`kills=${run.kills} ${JSON.stringify(run.byPoint)} rows=${run.rows} (final run ${run.finalRows}) over ${DATASETS.length} tables ` +
      `lost=0 duplicated=0 openedAfterKill=${opened} checkpoints=${checkpoints}`);
  });

  it('printed no password or token', () => {
    assert.ok(env.scan.count > 0);
    assert.deepEqual(env.scan.leaks(), []);
  });
});
