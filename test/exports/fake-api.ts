// A ServiceApi over an in-memory table, for testing the stream mechanics without a network. The
// HTTPS integration tests use the real client and sandbox; this one lets a test see every query.
import type { RequestOptions, ServiceApi } from '../../src/core/api.ts';
import { DatasetUnavailableError, GatewayTimeoutError } from '../../src/core/errors.ts';
import type { Catalog, DatasetRef, ExportPageBody, ExportRow, PageQuery } from '../../src/core/types.ts';

export interface FakeRow extends ExportRow {
  public_id: string;
  updated_at: string;
}

export interface FakeOptions {
  rows: FakeRow[];
  /** 'via' returns short pages: only rows at even positions of each scanned block. */
  pathKind?: 'direct' | 'via';
  /** An unbounded read with more than this many rows left answers 504. */
  unboundedBudget?: number;
  /** Any read whose window is wider than this (ms) answers 504. */
  maxWindowMs?: number;
  /** Any read with more rows than this left in its window, from its cursor on, answers 504
   * whatever its limit (what a via read costs the gateway). */
  windowBudget?: number;
  unavailable?: boolean;
  /** Answers 504 to the request with this 0-based index (a mid-window timeout). */
  timeoutAtRequest?: number;
}

/** The parts of ServiceApi the export fakes do not exercise: only fetchPage differs. */
abstract class ExportOnlyApi implements ServiceApi {
  abstract readonly lenderPublicId: string;

  abstract fetchPage(ref: DatasetRef, query: PageQuery, opts?: RequestOptions): Promise<ExportPageBody>;

  async catalog(): Promise<Catalog> {
    return { schemaVersion: 'v1', sections: [] };
  }

  async upsertAccounts(): Promise<never> {
    throw new Error('not in the fake');
  }

  async updateStatus(): Promise<never> {
    throw new Error('not in the fake');
  }
}

export class FakeApi extends ExportOnlyApi {
  readonly lenderPublicId = 'fake';
  readonly queries: PageQuery[] = [];
  readonly retrySettings: (boolean | undefined)[] = [];
  /** The queries answered 504. */
  readonly timeouts: PageQuery[] = [];
  rows: FakeRow[];
  readonly #opts: FakeOptions;

  constructor(opts: FakeOptions) {
    super();
    this.#opts = opts;
    this.rows = opts.rows;
  }

  async fetchPage(ref: DatasetRef, query: PageQuery, opts: RequestOptions = {}): Promise<ExportPageBody> {
    this.queries.push(query);
    this.retrySettings.push(opts.retry?.retryGatewayTimeout);
    await new Promise((resolve) => setImmediate(resolve));
    opts.signal?.throwIfAborted();
    const code = typeof ref === 'string' ? ref : ref.dataset;
    if (this.#opts.unavailable) throw new DatasetUnavailableError(code, `Dataset ${code} is not available.`, { status: 404 });
    const since = query.since === undefined ? -Infinity : Date.parse(query.since);
    const until = query.until === undefined ? Infinity : Date.parse(query.until);
    const sort = query.sort ?? 'asc';
    const key = (r: FakeRow): [number, string] => [Date.parse(r.updated_at), r.public_id];
    const cmp = (a: [number, string], b: [number, string]): number => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
    let inRange = this.rows.filter((r) => { const t = Date.parse(r.updated_at); return t >= since && t < until; });
    inRange.sort((a, b) => cmp(key(a), key(b)));
    if (sort === 'desc') inRange.reverse();
    if (query.cursor !== undefined) {
      const after = JSON.parse(Buffer.from(query.cursor, 'base64url').toString()) as [number, string];
      inRange = inRange.filter((r) => (sort === 'asc' ? cmp(key(r), after) > 0 : cmp(key(r), after) < 0));
    }
    const unbounded = query.since === undefined && query.until === undefined;
    const budget = this.#opts.unboundedBudget;
    const tooWide = this.#opts.maxWindowMs !== undefined && query.since !== undefined && query.until !== undefined && until - since > this.#opts.maxWindowMs;
    const overBudget = this.#opts.windowBudget !== undefined && inRange.length > this.#opts.windowBudget;
    if (this.#opts.timeoutAtRequest === this.queries.length - 1) {
      this.timeouts.push(query);
      throw new GatewayTimeoutError('Gateway timeout.', { status: 504 });
    }
    if ((unbounded && budget !== undefined && inRange.length > budget) || tooWide || overBudget) {
      this.timeouts.push(query);
      if (opts.retry?.retryGatewayTimeout === false) throw new GatewayTimeoutError('Gateway timeout.', { status: 504 });
      throw new GatewayTimeoutError('Gateway timeout after retries.', { status: 504 });
    }
    const limit = Math.min(1000, Math.max(1, query.limit ?? 500));
    const scanned = inRange.slice(0, limit);
    const rows = this.#opts.pathKind === 'via' ? scanned.filter((_, i) => i % 2 === 0) : scanned;
    const more = inRange.length > limit;
    const last = scanned.at(-1);
    const nextCursor = more && last ? Buffer.from(JSON.stringify(key(last))).toString('base64url') : null;
    return {
      section: { code: 'S2', name: 'S' },
      dataset: { code: code as 'D07', name: 'D' },
      rows: rows.map((r) => ({ ...r })),
      pagination: {
        limit, returned: rows.length, nextCursor,
        ...(query.includeTotal && { total: this.rows.filter((r) => { const t = Date.parse(r.updated_at); return t >= since && t < until; }).length, totalExact: true }),
      },
      meta: {
        schemaVersion: 'v1', cursorField: 'updated_at', sort,
        since: query.since ?? null, until: query.until ?? null, tenantPathKind: this.#opts.pathKind ?? 'direct', readFrom: 'primary',
      },
    };
  }
}

/** n rows spread over 2025, several sharing each timestamp (ties are where boundaries break). */
export function makeRows(n: number, startMs = Date.parse('2025-01-01T00:00:00Z'), stepMs = 3 * 3600_000): FakeRow[] {
  return Array.from({ length: n }, (_, i) => ({
    public_id: `r${String(i).padStart(6, '0')}`,
    updated_at: new Date(startMs + Math.floor(i / 3) * stepMs).toISOString(),
  }));
}

/** One scripted answer: rows and the nextCursor, for the request with this index and query. */
export type Script = (request: number, query: PageQuery) => { rows: ExportRow[]; nextCursor: string | null };

/**
 * A ServiceApi whose pages come from a script, for servers no table can describe (a cursor that
 * repeats, cycles or never ends). Refuses to answer past `maxRequests` so a looping client
 * fails the test instead of hanging it.
 */
export class ScriptedApi extends ExportOnlyApi {
  readonly lenderPublicId = 'scripted';
  readonly queries: PageQuery[] = [];
  readonly #script: Script;
  readonly #maxRequests: number;

  constructor(script: Script, maxRequests = 5000) {
    super();
    this.#script = script;
    this.#maxRequests = maxRequests;
  }

  async fetchPage(ref: DatasetRef, query: PageQuery, opts: RequestOptions = {}): Promise<ExportPageBody> {
    const index = this.queries.length;
    this.queries.push(query);
    await new Promise((resolve) => setImmediate(resolve));
    opts.signal?.throwIfAborted();
    if (index >= this.#maxRequests) throw new Error(`the client sent more than ${this.#maxRequests} requests: a loop`);
    const { rows, nextCursor } = this.#script(index, query);
    const code = typeof ref === 'string' ? ref : ref.dataset;
    return {
      section: { code: 'S2', name: 'S' },
      dataset: { code: code as 'D07', name: 'D' },
      rows: rows.map((r) => ({ ...r })),
      pagination: { limit: query.limit ?? 1000, returned: rows.length, nextCursor },
      meta: {
        schemaVersion: 'v1', cursorField: 'updated_at', sort: query.sort ?? 'asc',
        since: query.since ?? null, until: query.until ?? null, tenantPathKind: 'direct', readFrom: 'primary',
      },
    };
  }
}
