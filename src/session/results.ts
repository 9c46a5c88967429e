// Values the session helpers return. Each prints as a short summary (REPL, notebook, console.log)
// and serialises to plain data with toJSON, so nothing large or secret is dumped by accident.
import { inspect } from 'node:util';
import { counted } from '../core/counted.ts';
import type { Catalog, ExportRow, Pagination } from '../core/types.ts';
import { TextTable, formatTable } from './table.ts';

/** Rows of one dataset. An Array (so map/filter/length work) that prints as a table. */
export class RowList extends Array<ExportRow> {
  // map/filter/slice give plain arrays: a derived list is no longer "the first N rows of D07".
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }

  #dataset = '';

  get dataset(): string {
    return this.#dataset;
  }

  toJSON(): ExportRow[] {
    return [...this];
  }

  [inspect.custom](): string {
    const head = `${counted(this.length, 'row')} of ${this.#dataset}`;
    return this.length === 0 ? head : `${head}\n${formatTable(this)}`;
  }

  static forDataset(dataset: string, rows: Iterable<ExportRow>): RowList {
    const list = new RowList();
    list.#dataset = dataset;
    for (const row of rows) list.push(row);
    return list;
  }
}

/** One export page, summarised: counts, window and whether more follow (cursor not shown). */
export class PageSummary {
  readonly dataset: string;
  readonly rows: ExportRow[];
  readonly returned: number;
  readonly hasMore: boolean;
  readonly total: number | null | undefined;
  readonly window: { since: string | null; until: string | null } | undefined;

  constructor(page: { dataset: string; rows: ExportRow[]; pagination: Pagination; window?: { since: string | null; until: string | null } }) {
    this.dataset = page.dataset;
    this.rows = page.rows;
    this.returned = page.pagination.returned;
    this.hasMore = page.pagination.nextCursor !== null;
    this.total = page.pagination.total;
    this.window = page.window;
  }

  toJSON(): object {
    return { dataset: this.dataset, returned: this.returned, hasMore: this.hasMore, window: this.window, rows: this.rows };
  }

  [inspect.custom](): string {
    const w = this.window ? ` window ${this.window.since ?? '…'} → ${this.window.until ?? 'open'}` : '';
    return `Page ${this.dataset}: ${this.returned} rows${w}${this.hasMore ? ', more follow' : ', last page'}`;
  }
}

export interface CountResult {
  readonly dataset: string;
  /** Sum of the window totals; null when the service gave none (e.g. window_required). */
  readonly total: number | null;
  /** False when any window's count was capped or timed out: then total is a lower bound. */
  readonly exact: boolean;
  readonly windows: number;
  readonly notes: readonly string[];
}

/** The rows in a dataset as `session.count()` counted them; `exact` is false when the total is a lower bound. */
export class Count implements CountResult {
  constructor(
    readonly dataset: string,
    readonly total: number | null,
    readonly exact: boolean,
    readonly windows: number,
    readonly notes: readonly string[],
  ) {}

  toJSON(): CountResult {
    return { dataset: this.dataset, total: this.total, exact: this.exact, windows: this.windows, notes: this.notes };
  }

  valueOf(): number {
    return this.total ?? Number.NaN;
  }

  [inspect.custom](): string {
    if (this.total === null) return `${this.dataset}: no total (${this.notes.join(', ') || 'not given'})`;
    const n = this.total.toLocaleString('en-US');
    const over = this.windows > 1 ? ` over ${this.windows} windows` : '';
    return `${this.dataset}: ${this.exact ? '' : 'at least '}${n} rows${over}${this.exact ? '' : ` (${this.notes.join(', ')})`}`;
  }
}

export interface Reject {
  index: number;
  accountId?: string;
  /** `line N` / `element N` of a file source. */
  where?: string;
  errors: string[];
}

/** Rejected records a WriteResult prints; `.rejects` holds them all. */
const MAX_REJECTS_SHOWN = 20;

/** Outcome of push()/flag(): the writer's summary and the rejected records' reasons. */
export class WriteResult {
  constructor(
    readonly summary: Readonly<Record<string, unknown>>,
    readonly rejects: readonly Reject[],
  ) {}

  get accepted(): number {
    return Number(this.summary.accepted ?? 0);
  }

  get rejected(): number {
    return Number(this.summary.rejected ?? this.rejects.length);
  }

  toJSON(): object {
    return { summary: this.summary, rejects: this.rejects };
  }

  [inspect.custom](): string {
    const s = this.summary;
    const head = `received ${s.received ?? '?'}, accepted ${this.accepted}, rejected ${this.rejected}`;
    if (this.rejects.length === 0) return head;
    // One line per reason, each whole (the reasons are what the user came to read); the record's
    // index, position and accountId on its first line only.
    const shown = this.rejects.slice(0, MAX_REJECTS_SHOWN);
    const rows = shown.flatMap((r) => (r.errors.length > 0 ? r.errors : ['']).map((error, i) =>
      i === 0 ? { index: r.index, where: r.where ?? '', accountId: r.accountId ?? '', error } : { error }));
    const more = this.rejects.length - shown.length;
    const table = formatTable(rows, ['index', 'where', 'accountId', 'error'], { maxWidth: 160, maxRows: Infinity });
    return `${head}\n${table}${more > 0 ? `\n… ${more} more rejects (all in .rejects)` : ''}`;
  }
}

/** The live catalog, printable as one line per dataset. */
export class CatalogView {
  constructor(readonly catalog: Catalog) {}

  get schemaVersion(): string {
    return this.catalog.schemaVersion;
  }

  get sections(): Catalog['sections'] {
    return this.catalog.sections;
  }

  /** Every dataset, flattened, with its section code. */
  datasets(): { section: string; code: string; name: string; cursorField: string; available: boolean }[] {
    return this.catalog.sections.flatMap((s) =>
      s.datasets.map((d) => ({ section: s.code, code: d.code, name: d.name, cursorField: d.cursorField, available: d.available })));
  }

  available(): string[] {
    return this.datasets().filter((d) => d.available).map((d) => d.code);
  }

  table(): TextTable {
    return new TextTable(this.datasets(), ['section', 'code', 'name', 'cursorField', 'available'], { maxRows: Infinity });
  }

  toJSON(): Catalog {
    return this.catalog;
  }

  [inspect.custom](): string {
    return `Catalog ${this.catalog.schemaVersion}\n${this.table().text}`;
  }
}
