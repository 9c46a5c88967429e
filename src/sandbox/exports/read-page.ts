// One page of a dataset: a keyset seek plus a bounded scan, the same cost at the first page and
// at the millionth row. Pure: no clock, no I/O.
//
// How the two tenant path kinds behave (the fetch's meta.tenantPathKind, docs/service-contract.md):
// - direct: the lender filter is on the dataset's own rows, so the read keeps scanning until it
//   has `limit` of the tenant's rows: constant page size.
// - via: the lender filter joins through a parent, so the read takes the next `limit` candidate
//   rows of the store and keeps those that belong to the tenant: `returned` varies from 0 to
//   `limit` while `nextCursor` still points past everything scanned.
// nextCursor is null only when nothing is left in the range, so it is the one end-of-data signal.
import type { TenantPathKind } from '../../core/catalog.ts';
import type { CursorKey, SortOrder } from './cursor.ts';
import type { Pos } from './keyset-index.ts';
import type { ExportRow } from './redact.ts';
import type { ExportTable } from './table.ts';

export interface PageRequest {
  readonly since: number | null;
  readonly until: number | null;
  readonly after: Pick<CursorKey, 'ts' | 'id'> | null;
  readonly limit: number;
  readonly sort: SortOrder;
  readonly includeTotal: boolean;
}

export interface PageLimits {
  readonly pathKind: TenantPathKind;
  /** The gateway's budget: rows a read may have to scan in its window, from the cursor on, before
   * it answers 504 (every store row counts, the tenant's or not); null: no limit. */
  readonly scanBudget: number | null;
  /** Store rows a windowed count of a via dataset may evaluate before it gives up ('timeout'). */
  readonly countBudget: number;
  readonly totalCap: number;
}

export interface PageTotal {
  readonly total: number | null;
  readonly totalExact: boolean;
  readonly totalNote?: 'capped' | 'timeout' | 'window_required';
}

export type PageResult =
  | {
    readonly kind: 'page';
    readonly rows: ExportRow[];
    readonly next: { ts: number; id: number } | null;
    readonly total?: PageTotal;
  }
  | { readonly kind: 'gateway-timeout'; readonly wouldScan: number };

/** Key strictly below every stored id at a timestamp: bounds on the cursor field alone. */
const BEFORE_ANY_ID = -1;

export function readPage(table: ExportTable, req: PageRequest, limits: PageLimits): PageResult {
  const index = table.index;
  const lo = req.since === null ? index.begin() : index.lowerBound(req.since, BEFORE_ANY_ID);
  const hi = req.until === null ? index.end() : index.lowerBound(req.until, BEFORE_ANY_ID);
  const empty = index.compare(lo, hi) >= 0;
  const asc = req.sort === 'asc';

  // Where the walk resumes: just after the boundary row in the walk's direction, kept in range.
  let from: Pos = asc ? lo : hi;
  if (req.after !== null && !empty) {
    const p = asc ? index.upperBound(req.after.ts, req.after.id) : index.lowerBound(req.after.ts, req.after.id);
    from = asc ? max(index.compare(p, lo), p, lo) : min(index.compare(p, hi), p, hi);
  }

  const unbounded = req.since === null && req.until === null;
  // A via read joins through the parent before it can sort and cut a page, so what it costs is
  // the rest of its window, whatever the limit: a bounded but wide window costs what an
  // unbounded read does.
  if (limits.scanBudget !== null && !empty) {
    const wouldScan = asc ? index.countBetween(from, hi) : index.countBetween(lo, from);
    if (wouldScan > limits.scanBudget) return { kind: 'gateway-timeout', wouldScan };
  }

  const rows: ExportRow[] = [];
  let next: { ts: number; id: number } | null = null;
  if (!empty) {
    const visit = limits.pathKind === 'via' ? viaVisitor(table, req.limit, rows) : directVisitor(table, req.limit, rows);
    if (asc) index.scanForward(from, hi, visit.visit);
    else index.scanBackward(from, lo, visit.visit);
    next = visit.next();
  }
  const page = { kind: 'page' as const, rows, next };
  return req.includeTotal ? { ...page, total: countTotal(table, lo, hi, empty, unbounded, limits) } : page;
}

function max(cmp: number, a: Pos, b: Pos): Pos {
  return cmp >= 0 ? a : b;
}

function min(cmp: number, a: Pos, b: Pos): Pos {
  return cmp <= 0 ? a : b;
}

interface Visitor {
  visit(ts: number, id: number, own: boolean): boolean;
  next(): { ts: number; id: number } | null;
}

/** Fills the page with own rows; the page continues only if another own row exists. */
function directVisitor(table: ExportTable, limit: number, rows: ExportRow[]): Visitor {
  let last: { ts: number; id: number } | null = null;
  let more = false;
  return {
    visit(ts, id, own) {
      if (!own) return true;
      if (rows.length === limit) {
        more = true;
        return false;
      }
      rows.push(table.render(id, ts));
      last = { ts, id };
      return true;
    },
    next: () => (more ? last : null),
  };
}

/** Scans `limit` candidates whoever they belong to; the boundary is the last one scanned. */
function viaVisitor(table: ExportTable, limit: number, rows: ExportRow[]): Visitor {
  let last: { ts: number; id: number } | null = null;
  let scanned = 0;
  let more = false;
  return {
    visit(ts, id, own) {
      if (scanned === limit) {
        more = true;
        return false;
      }
      scanned += 1;
      last = { ts, id };
      if (own) rows.push(table.render(id, ts));
      return true;
    },
    next: () => (more ? last : null),
  };
}

/** The service's totals rules (docs/service-contract.md): a count of the tenant's rows in [since, until), whatever the cursor. */
function countTotal(table: ExportTable, lo: Pos, hi: Pos, empty: boolean, unbounded: boolean, limits: PageLimits): PageTotal {
  if (limits.pathKind === 'via') {
    if (unbounded) return { total: null, totalExact: false, totalNote: 'window_required' };
    // The join must look at every store row of the window before it knows which are the tenant's.
    if (!empty && table.index.countBetween(lo, hi) > limits.countBudget) {
      return { total: null, totalExact: false, totalNote: 'timeout' };
    }
  }
  const count = empty ? 0 : table.index.countOwnBetween(lo, hi);
  if (count > limits.totalCap) return { total: limits.totalCap, totalExact: false, totalNote: 'capped' };
  return { total: count, totalExact: true };
}
