// `lender sync --to postgres://…` SIGKILLed at random instants: on a timer, and while its
// connection is inside a transaction (a page's COPY, merge or state write in flight, seen in
// pg_stat_activity). At the end every table equals the reference walk: 0 lost, 0 duplicated.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { datasetInfo } from '../../src/core/catalog.ts';
import { adminQuery, createDatabase, startPostgres, type PgCluster, type PgDatabase } from '../helpers/postgres.ts';
import { SOAK } from '../helpers/resilience.ts';
import {
  crashAndCompare, keyColumnOf, startCrashSandbox, tableIdentity, timerKill, type CrashSandbox, type KillPoint,
} from '../helpers/crash-sync.ts';

const KILLS = SOAK ? 30 : 20;

describe('crash and resume: lender sync --to postgres killed with SIGKILL at random instants', () => {
  let env: CrashSandbox;
  let cluster: PgCluster;
  let db: PgDatabase;

  before(async () => {
    cluster = await startPostgres();
    db = await createDatabase(cluster);
    env = await startCrashSandbox();
    env.scan.secret(cluster.password);
  });
  after(async () => {
    await env?.stop();
    await cluster?.stop();
  });

  /** Kills while the sync's connection is in a transaction, after skipping a random number of them. */
  const inTransaction: KillPoint = {
    name: 'in-transaction',
    arm(kill, random) {
      const skip = Math.floor(random() * 20);
      const seen = new Set<string>();
      let stopped = false;
      const poll = async () => {
        while (!stopped) {
          const { rows } = await adminQuery<{ xact: string }>(cluster,
            `SELECT xact_start::text AS xact FROM pg_stat_activity
             WHERE datname = $1 AND pid <> pg_backend_pid() AND xact_start IS NOT NULL AND state <> 'idle'
               AND query NOT ILIKE '%pg_stat_activity%'`, [db.database], 'postgres');
          for (const r of rows) seen.add(r.xact);
          if (seen.size > skip) {
            kill();
            return;
          }
        }
      };
      void poll().catch(() => undefined);
      return () => {
        stopped = true;
      };
    },
  };

  it(`survives ${KILLS} kills: every table equals the service's rows, each once`, async (ctx) => {
    const run = await crashAndCompare(ctx, env, {
      args: ['--to', db.url],
      env: { PGPASSWORD: cluster.password },
      points: [timerKill, inTransaction],
      async readBack(code) {
        const cursor = datasetInfo(code)!.cursorField;
        const { rows } = await adminQuery<{ id: string }>(cluster,
          `SELECT "${keyColumnOf(code)}" || '|' || to_char("${cursor}" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS id FROM lender.${code.toLowerCase()}`,
          [], db.database);
        return rows.map((r) => r.id);
      },
      rowIdentity: tableIdentity,
    }, KILLS);
    assert.equal(run.kills, KILLS);
    ctx.diagnostic(`kills=${run.kills} ${JSON.stringify(run.byPoint)} rows=${run.rows} (final run ${run.finalRows}) lost=0 duplicated=0`);
  });

  it('printed no password or token', () => {
    assert.ok(env.scan.count > 0);
    assert.deepEqual(env.scan.leaks(), []);
  });
});
