// The window walk's safety net against a server whose cursor never ends (pure, no I/O).
import { ProtocolError } from '../core/errors.ts';
import type { ExportPageBody, ExportRow } from '../core/types.ts';
import { advanceLast, compareCursorValues, cursorValueOf, rowKey, type RowKey, type ValueMark } from './highwater.ts';
import { describeWindow, type Window } from './windows.ts';

/**
 * Safety bound against a server whose cursor never ends: this many pages in a row that
 * carry rows but none beyond the last delivered (cursor value, id) position fail the walk. A
 * correct server never sends such a page (rows are strictly ordered, none repeated), so any
 * bound is safe; 50 is generous for a server that repeats a page now and then. Empty pages
 * neither count nor reset it: via datasets legitimately send long runs of them.
 */
export const MAX_STALLED_PAGES = 50;
/** The cursors seen since the walk last advanced are kept to spot a cycle (A -> B -> A), up to
 * this many; a run of fresh empty-page cursors longer than this starts the memory afresh, so a
 * cycle that long goes unnoticed (the caller's signal still stops it) but memory stays bounded. */
export const MAX_REMEMBERED_CURSORS = 10_000;

/** One per walk: judges each page against what this walk itself has read. */
export class LoopGuard {
  readonly #dataset: string;
  readonly #window: Window;
  readonly #sort: 'asc' | 'desc';
  readonly #key: RowKey;
  // Re-reading rows an earlier read delivered is still progress for this walk.
  #read: ValueMark | null = null;
  // Cursors answered since the walk last moved forward, and pages with rows in a row that did not move it.
  #cursors = new Set<string>();
  #stalled = 0;

  constructor(dataset: string, window: Window, sort: 'asc' | 'desc', key: RowKey) {
    this.#dataset = dataset;
    this.#window = window;
    this.#sort = sort;
    this.#key = key;
  }

  /** Throws a ProtocolError when the answer to `sent` shows the walk would never end. */
  check(sent: string | null, body: ExportPageBody, field: string): void {
    const next = body.pagination.nextCursor;
    if (movesPast(this.#read, body.rows, field, this.#sort, this.#key)) {
      this.#stalled = 0;
      this.#cursors = new Set();
    } else if (body.rows.length > 0) {
      this.#stalled += 1;
    }
    if (next !== null) {
      // Passing the same cursor returns the same page (the service's pagination contract,
      // docs/service-contract.md): a cursor equal to the one just sent, or one already
      // answered since the last new row, can only loop.
      if (next === sent || this.#cursors.has(next)) this.#fail('a nextCursor it had already sent');
      if (this.#stalled >= MAX_STALLED_PAGES) this.#fail(`${this.#stalled} pages in a row with no row past the last one delivered`);
      if (this.#cursors.size >= MAX_REMEMBERED_CURSORS) this.#cursors = new Set();
      this.#cursors.add(next);
    }
    this.#read = advanceLast(this.#read, body.rows, field, this.#key);
  }

  #fail(what: string): never {
    throw new ProtocolError(
      `The service sent ${this.#dataset} in the window ${describeWindow(this.#window)} ${what}, so the walk would never end; stopped.`,
    );
  }
}

/**
 * Whether a page carries a row beyond `last` in delivery order: a later cursor value, or the same
 * value with an id not delivered at it yet. Rows without a cursor value cannot be placed, so they
 * do not count as progress (the service orders and windows by that value; it is never null).
 */
export function movesPast(
  last: ValueMark | null, rows: readonly ExportRow[], field: string, sort: 'asc' | 'desc', key: RowKey = rowKey,
): boolean {
  let ids: Set<string> | undefined;
  for (const row of rows) {
    const v = cursorValueOf(row, field);
    if (v === null) continue;
    if (last === null) return true;
    const cmp = compareCursorValues(v, last.value);
    if (sort === 'asc' ? cmp > 0 : cmp < 0) return true;
    if (cmp === 0) {
      ids ??= new Set(last.ids);
      if (!ids.has(key(row))) return true;
    }
  }
  return false;
}
