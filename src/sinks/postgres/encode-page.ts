// A page of rows as COPY text for a table's columns (pure). The same values as columns.ts
// `rowValues` gives, in one pass over each row: this runs for every row synced, and checking a
// value against its column once instead of twice (TableShape.observe, then rowValues) is most of
// the sink's own CPU time. So the table's shape is consulted (`observe`) only for pages that bring
// something new: a field without a column, or a field whose value did not fit for the first time.
import type { ExportRow } from '../../core/types.ts';
import { isInheritedName, ownField, withField } from '../../core/own-fields.ts';
import { fits, isBookkeepingColumn, latestByIdentity } from '../columns.ts';
import type { SinkDataset } from '../sink.ts';
import { copyField, copyLine, UnstorableValueError } from './copy-text.ts';
import { withinLimit, type PgColumn } from './sql.ts';

export interface PageLayout {
  /** The row's fields stored in columns, in COPY order (after the key for a 'content' identity);
   * a column with a limit (a narrower column made by hand) takes only the values within it. */
  dataColumns: readonly PgColumn[];
  /** Fields already known to have values that do not fit their column: no news on this page. */
  knownMismatches: ReadonlySet<string>;
  /** Fields known to get no column (TableShape.homeless): their values go to `_mismatched`. */
  homeless?: ReadonlySet<string>;
}

export type EncodedPage =
  | { kind: 'text'; text: string; rows: number; mismatched: Set<string> }
  /** The page has a field without a column, or a first misfit: observe it, then encode again. */
  | { kind: 'news' };

/**
 * The rows as COPY lines: one per identity, its newest version (latestByIdentity; so one INSERT ...
 * ON CONFLICT never meets its own key twice). Lines are the 'content' key when the dataset has one,
 * the data columns, then `_mismatched`. With `settled` the page is encoded whatever it holds
 * (its news were observed): fields without a column go to `_mismatched`. A row without an
 * identity: SinkError. The lines come in the rows' order, or with `order: 'key'` in the order of
 * their identities' UTF-8 bytes, the merge's order (sql.ts mergeSql), for a COPY straight into
 * the table.
 */
export function encodePage(
  dataset: SinkDataset, rows: readonly ExportRow[], layout: PageLayout, settled: boolean, order: 'rows' | 'key' = 'rows',
): EncodedPage {
  const byKey = latestByIdentity(dataset, rows);
  const named = new Set(layout.dataColumns.map((c) => c.name));
  const inherited = layout.dataColumns.map((c) => isInheritedName(c.name));
  const mismatched = new Set<string>();
  let text = '';
  for (const key of order === 'key' ? byteOrder([...byKey.keys()]) : byKey.keys()) {
    const row = byKey.get(key)!;
    let line: string | undefined;
    try {
      line = encodeRow(dataset.identity === 'content' ? key : undefined, row, layout, inherited, named, settled, mismatched);
    } catch (error) {
      if (error instanceof UnstorableValueError) throw new UnstorableValueError(`the row ${key} cannot be stored: ${error.message}`);
      throw error;
    }
    if (line === undefined) return { kind: 'news' };
    text += line;
  }
  return { kind: 'text', text, rows: byKey.size, mismatched };
}

/**
 * The keys sorted by their UTF-8 bytes (PostgreSQL's COLLATE "C"). That is code point order, which
 * JavaScript's own sort (by UTF-16 units) gives as well unless a key holds a character from U+E000
 * to U+FFFF, which UTF-16 puts after the characters beyond U+FFFF: such keys are compared by code
 * point.
 */
export function byteOrder(keys: string[]): string[] {
  return keys.some((k) => PRIVATE_USE_AND_ABOVE.test(k)) ? keys.sort(compareCodePoints) : keys.sort();
}

const PRIVATE_USE_AND_ABOVE = /[\uE000-\uFFFF]/;

function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** A UTF-16 unit's place in code point order: surrogates (characters beyond U+FFFF) above the rest. */
function codePointRank(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  return unit >= 0xe000 ? unit - 0x800 : unit;
}

/** One COPY line, or undefined for news (see encodePage). Misfit field names go to `mismatchedNames`. */
function encodeRow(
  contentKey: string | undefined, row: ExportRow, layout: PageLayout, inherited: readonly boolean[], named: ReadonlySet<string>, settled: boolean,
  mismatchedNames: Set<string>,
): string | undefined {
  const line = contentKey === undefined ? [] : [copyField(contentKey, 'text')];
  let mismatched: Record<string, unknown> | null = null;
  let stored = 0;
  for (let i = 0; i < layout.dataColumns.length; i += 1) {
    const c = layout.dataColumns[i]!;
    const value = inherited[i] ? ownField(row, c.name) : row[c.name];
    if (value === undefined) {
      line.push('\\N');
      continue;
    }
    stored += 1;
    if (value === null) {
      line.push('\\N');
    } else if (fits(value, c.type) && withinLimit(value, c.limit)) {
      line.push(copyField(value, c.type));
    } else {
      if (!settled && !layout.knownMismatches.has(c.name)) return undefined;
      line.push('\\N');
      mismatched = withField(mismatched, c.name, value);
      mismatchedNames.add(c.name);
    }
  }
  // Fields beside the columns (new fields, or bookkeeping names the row itself carries): only
  // looked for when the row has more fields than it has values in columns.
  if (stored < Object.keys(row).length) {
    for (const [name, value] of Object.entries(row)) {
      // A field seen only as null has no column yet and loses nothing.
      if (value === undefined || value === null || named.has(name)) continue;
      if (!settled && !isBookkeepingColumn(name) && layout.homeless?.has(name) !== true) return undefined;
      mismatched = withField(mismatched, name, value);
    }
  }
  line.push(copyField(mismatched, 'json'));
  return copyLine(line);
}
