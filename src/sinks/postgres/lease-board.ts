// The lease board of the PostgreSQL sink: two tables beside the data. `_lender_loads` holds each
// dataset's current load (one row, locked while a plan is stored or a load closed); `_lender_parts`
// holds the parts of every load with their lease (owner, expiry), their own state, and counts of
// claims, pages (commits: pages read while one runs go in together), rows and completions, so a
// test can prove that no part was loaded twice.
// Claims use FOR UPDATE SKIP LOCKED: workers never wait on each other's rows, and a part whose
// lease expired is claimed like a pending one.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ExportRow } from '../../core/types.ts';
import { ConfigError } from '../../core/errors.ts';
import { parseDuration, type DurationValue } from '../../core/options.ts';
import { processAlive } from '../../exports/lock-holder.ts';
import type { DatasetState } from '../../exports/state.ts';
import { LeaseLostError, type Claim, type JoinedLoad, type LeaseBoard, type LoadParts, type PartPlan } from '../shared-load.ts';
import { storableJson } from '../json-text.ts';
import type { SinkDataset } from '../sink.ts';
import { qualified } from './sql.ts';
import type { PgStore } from './store.ts';
import type { PgTransaction } from './transaction.ts';

export const DEFAULT_LEASE_MS = 30_000;
/** A lease is renewed while a page commits; shorter than this it would lapse between renewals. */
export const MIN_LEASE_MS = 100;
/** 24 hours: a stopped worker's part waits at most that long, and the renewal timer (a third of
 * it) stays far within what a timer can wait. */
export const MAX_LEASE_MS = 24 * 60 * 60 * 1000;

/** A lease's length in ms, or a ConfigError naming `what` (the option, or the CLI flag) and the bounds. */
export function parseLease(value: DurationValue, what: string): number {
  const ms = parseDuration(value, what, { min: MIN_LEASE_MS });
  if (ms > MAX_LEASE_MS) throw new ConfigError(`${what} must be at most 24h (${MAX_LEASE_MS} ms), not ${typeof value === 'string' ? `'${value}'` : JSON.stringify(value)}`);
  return ms;
}

export const LOADS_TABLE = '_lender_loads';
export const PARTS_TABLE = '_lender_parts';

export function leaseTablesSql(schema: string): string[] {
  const loads = qualified(schema, LOADS_TABLE);
  const parts = qualified(schema, PARTS_TABLE);
  return [
    `CREATE TABLE IF NOT EXISTS ${loads} (key TEXT PRIMARY KEY, load_id TEXT, mode TEXT, planned_by TEXT,
       started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ)`,
    `CREATE TABLE IF NOT EXISTS ${parts} (key TEXT NOT NULL, load_id TEXT NOT NULL, part INTEGER NOT NULL,
       plan JSONB NOT NULL, state JSONB, status TEXT NOT NULL DEFAULT 'pending', owner TEXT, lease_until TIMESTAMPTZ,
       claims INTEGER NOT NULL DEFAULT 0, pages INTEGER NOT NULL DEFAULT 0, rows BIGINT NOT NULL DEFAULT 0,
       completions INTEGER NOT NULL DEFAULT 0, finished_by TEXT, PRIMARY KEY (key, load_id, part))`,
  ];
}

export class PgLeaseBoard implements LeaseBoard {
  readonly worker = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly leaseMs: number;
  readonly #store: PgStore;
  readonly #loads: string;
  readonly #parts: string;
  #tables: Promise<void> | undefined;

  constructor(store: PgStore, leaseMs = DEFAULT_LEASE_MS) {
    this.#store = store;
    this.leaseMs = leaseMs;
    this.#loads = qualified(store.schema, LOADS_TABLE);
    this.#parts = qualified(store.schema, PARTS_TABLE);
  }

  async join(dataset: SinkDataset, plan: (committed: DatasetState | undefined) => Promise<LoadParts>): Promise<JoinedLoad> {
    // The dataset's table is made with the first commit, once the service answered for the
    // dataset: one it refuses leaves no empty table. A table made by hand is checked now.
    await this.#store.ensureTable(dataset, false);
    this.#tables ??= this.#store.transaction(async (q) => {
      // Looked up first: PostgreSQL checks the right to CREATE in the schema before it sees that
      // a table exists, so a user without it (a database its owner prepared) could not even
      // send CREATE TABLE IF NOT EXISTS.
      const present = async (): Promise<boolean> => {
        // From pg_class, not to_regclass: that would not see tables another worker committed
        // while this one waited for the lock (the catalog cache; transaction.ts #lookUp).
        const { rows } = await q.query<{ n: string }>(
          'SELECT count(*) AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1 AND c.relname IN ($2, $3)',
          [this.#store.schema, LOADS_TABLE, PARTS_TABLE]);
        return Number(rows[0]!.n) === 2;
      };
      if (await present()) return;
      // Workers starting together would race on the catalog with IF NOT EXISTS alone.
      await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`lender-streams leases ${this.#store.schema}`]);
      for (const sql of leaseTablesSql(this.#store.schema)) await q.query(sql);
    });
    await this.#tables;
    for (;;) {
      const seen = await this.#store.transaction(async (q): Promise<{ joined: JoinedLoad } | { lastLoadId: string | null; committed: DatasetState | undefined }> => {
        await q.query(`INSERT INTO ${this.#loads} (key) VALUES ($1) ON CONFLICT (key) DO NOTHING`, [dataset.key]);
        const { rows } = await q.query<{ load_id: string | null; mode: string | null; finished_at: Date | null }>(
          `SELECT load_id, mode, finished_at FROM ${this.#loads} WHERE key = $1`, [dataset.key]);
        const current = rows[0]!;
        if (current.load_id !== null && current.finished_at === null) {
          const { rows: progress } = await q.query<{ started: boolean }>(
            `SELECT bool_or(pages > 0 OR status = 'done') AS started FROM ${this.#parts} WHERE key = $1 AND load_id = $2`, [dataset.key, current.load_id]);
          return { joined: { loadId: current.load_id, mode: progress[0]?.started === true ? 'resumed' : (current.mode as 'initial' | 'incremental') } };
        }
        return { lastLoadId: current.load_id, committed: await q.loadState(dataset.key) };
      });
      if ('joined' in seen) return seen.joined;
      // Planned outside any transaction: the plan may ask the service where the data starts, and
      // a transaction left open meanwhile could meet the server's idle-in-transaction timeout.
      const next = await plan(seen.committed);
      const joined = await this.#store.transaction(async (q): Promise<JoinedLoad | undefined> => {
        // Locked until commit: of workers planning at once, the first stores its plan; the others
        // find the load changed and join that plan.
        const { rows } = await q.query<{ load_id: string | null }>(`SELECT load_id FROM ${this.#loads} WHERE key = $1 FOR UPDATE`, [dataset.key]);
        if (rows[0]!.load_id !== seen.lastLoadId) return undefined;
        const loadId = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
        await q.query(`UPDATE ${this.#loads} SET load_id = $2, mode = $3, planned_by = $4, started_at = now(), finished_at = NULL WHERE key = $1`,
          [dataset.key, loadId, next.mode, this.worker]);
        // One statement for all parts: an initial load of a via dataset has a part per month.
        await q.query(
          `INSERT INTO ${this.#parts} (key, load_id, part, plan) SELECT $1, $2, ord - 1, p FROM jsonb_array_elements($3::jsonb) WITH ORDINALITY AS t(p, ord)`,
          [dataset.key, loadId, storableJson(next.parts)]);
        return { loadId, mode: next.mode };
      });
      if (joined !== undefined) return joined;
    }
  }

  async claim(dataset: SinkDataset, loadId: string): Promise<Claim | { retryInMs: number } | 'done'> {
    return this.#store.transaction(async (q) => {
      const { rows } = await q.query<{ part: number; plan: PartPlan; state: DatasetState | null }>(
        `UPDATE ${this.#parts} SET status = 'leased', owner = $3, lease_until = now() + $4 * interval '1 millisecond', claims = claims + 1
         WHERE (key, load_id, part) = (
           SELECT key, load_id, part FROM ${this.#parts}
           WHERE key = $1 AND load_id = $2 AND (status = 'pending' OR (status = 'leased' AND lease_until < now()))
           ORDER BY part LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING part, plan, state`,
        [dataset.key, loadId, this.worker, this.leaseMs]);
      const claimed = rows[0];
      if (claimed !== undefined) return { loadId, part: claimed.part, plan: claimed.plan, state: claimed.state };
      const { rows: left } = await q.query<{ open: string; wait_ms: number | null }>(
        `SELECT count(*) FILTER (WHERE status <> 'done') AS open,
                greatest(0, extract(epoch FROM min(lease_until) FILTER (WHERE status = 'leased') - now()) * 1000) AS wait_ms
         FROM ${this.#parts} WHERE key = $1 AND load_id = $2`, [dataset.key, loadId]);
      if (Number(left[0]!.open) === 0) return 'done';
      if (await this.#expireDeadNeighbours(q, dataset.key, loadId)) return { retryInMs: 0 };
      // Parts held by live workers (or locked by a commit right now): look again soon, and at the latest when a lease runs out.
      return { retryInMs: Math.min(1000, Math.max(20, Math.ceil(Number(left[0]!.wait_ms ?? 0)))) };
    });
  }

  /**
   * Leases held by workers of this host whose process has ended (killed, crashed) are expired at
   * once rather than waited out. Only a shortcut: if the process is in fact alive (another pid
   * namespace behind the same host name), its next commit finds the part taken and commits nothing.
   */
  async #expireDeadNeighbours(q: PgTransaction, key: string, loadId: string): Promise<boolean> {
    const { rows } = await q.query<{ owner: string }>(
      `SELECT DISTINCT owner FROM ${this.#parts} WHERE key = $1 AND load_id = $2 AND status = 'leased' AND lease_until >= now()`, [key, loadId]);
    const dead = rows.map((r) => r.owner).filter((owner) => {
      const [host, pid] = owner.split(':');
      return host === hostname() && Number(pid) !== process.pid && !processAlive(Number(pid));
    });
    if (dead.length === 0) return false;
    await q.query(`UPDATE ${this.#parts} SET lease_until = now() - interval '1 millisecond' WHERE key = $1 AND load_id = $2 AND status = 'leased' AND owner = ANY($3)`,
      [key, loadId, dead]);
    return true;
  }

  async commit(dataset: SinkDataset, claim: Claim, rows: readonly ExportRow[], state: DatasetState, done: boolean): Promise<void> {
    // Made here when missing, since a part's first commit comes once the service answered for the
    // dataset; in a short transaction of its own, so that the schema's DDL lock is not held
    // through the commit's rows (other workers' first commits wait for it).
    await this.#store.ensureTable(dataset);
    await this.#store.transaction(async (q) => {
      // The part's row is locked first: a worker claiming it meanwhile skips it, and a part another
      // worker took over fails the whole transaction, rows included.
      const held = await q.query(
        `SELECT 1 FROM ${this.#parts} WHERE key = $1 AND load_id = $2 AND part = $3 AND owner = $4 AND status = 'leased' FOR UPDATE`,
        [dataset.key, claim.loadId, claim.part, this.worker]);
      if (held.rows.length === 0) throw new LeaseLostError(`${dataset.code}: part ${claim.part} was taken over by another worker; its pages are theirs now`);
      if (rows.length > 0) await q.mergeRows(dataset, rows);
      await q.query(
        `UPDATE ${this.#parts} SET state = $5, pages = pages + $6, rows = rows + $7,
           lease_until = now() + $8 * interval '1 millisecond',
           status = CASE WHEN $9 THEN 'done' ELSE status END,
           completions = completions + CASE WHEN $9 THEN 1 ELSE 0 END,
           finished_by = CASE WHEN $9 THEN $4 ELSE finished_by END
         WHERE key = $1 AND load_id = $2 AND part = $3 AND owner = $4`,
        [dataset.key, claim.loadId, claim.part, this.worker, storableJson(state), done ? 0 : 1, rows.length, this.leaseMs, done]);
    });
  }

  async renew(dataset: SinkDataset, claim: Claim): Promise<boolean> {
    return this.#store.transaction(async (q) => {
      const result = await q.query(
        `UPDATE ${this.#parts} SET lease_until = now() + $5 * interval '1 millisecond'
         WHERE key = $1 AND load_id = $2 AND part = $3 AND owner = $4 AND status = 'leased'`,
        [dataset.key, claim.loadId, claim.part, this.worker, this.leaseMs]);
      return result.rowCount === 1;
    });
  }

  async release(dataset: SinkDataset, claim: Claim): Promise<void> {
    await this.#store.transaction(async (q) => {
      await q.query(`UPDATE ${this.#parts} SET status = 'pending', owner = NULL, lease_until = NULL
        WHERE key = $1 AND load_id = $2 AND part = $3 AND owner = $4 AND status = 'leased'`, [dataset.key, claim.loadId, claim.part, this.worker]);
    });
  }

  async finish(dataset: SinkDataset, loadId: string, merge: (parts: DatasetState[], start: DatasetState | undefined) => DatasetState): Promise<void> {
    await this.#store.transaction(async (q) => {
      const { rows } = await q.query<{ finished_at: Date | null }>(
        `SELECT finished_at FROM ${this.#loads} WHERE key = $1 AND load_id = $2 FOR UPDATE`, [dataset.key, loadId]);
      if (rows[0] === undefined || rows[0].finished_at !== null) return;
      const { rows: parts } = await q.query<{ status: string; state: DatasetState | null; plan: PartPlan }>(
        `SELECT status, state, plan FROM ${this.#parts} WHERE key = $1 AND load_id = $2 ORDER BY part`, [dataset.key, loadId]);
      if (parts.some((p) => p.status !== 'done')) return;
      const start = parts.find((p) => p.plan.start !== null)?.plan.start ?? (await q.loadState(dataset.key));
      await q.saveState(dataset.key, merge(parts.map((p) => p.state!), start ?? undefined));
      await q.query(`UPDATE ${this.#loads} SET finished_at = now() WHERE key = $1`, [dataset.key]);
    });
  }
}

/** The lease table's counts for one dataset's loads, for tests and `lender sync` diagnostics. */
export function partsReportSql(schema: string): string {
  return `SELECT load_id, part, status, claims, pages, rows, completions, finished_by FROM ${qualified(schema, PARTS_TABLE)} WHERE key = $1 ORDER BY load_id, part`;
}

