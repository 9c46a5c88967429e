// Compact text tables for the REPL and notebooks: plain strings (no ANSI), so they read the
// same in a terminal, a saved notebook output and a log file.
import { inspect } from 'node:util';
import { isInheritedName, ownField } from '../core/own-fields.ts';

export interface TableOptions {
  /** Widest a cell may be before it is cut with '…'. Default 36 (a UUID fits). */
  maxWidth?: number;
  /** Rows shown before a "… N more rows" line. Default 50. */
  maxRows?: number;
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value) ?? String(value);
}

function cut(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= width ? flat : `${flat.slice(0, Math.max(1, width - 1))}…`;
}

/** Union of the keys of the rows, in first-seen order. */
export function fieldsOf(rows: readonly object[]): string[] {
  const seen = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) seen.add(key);
  return [...seen];
}

/** The cells of a table as text, cut to the widest allowed, and which columns hold numbers. */
export interface TableCells {
  columns: string[];
  rows: string[][];
  /** Per column: every shown value is a number (or empty), so it is aligned right. */
  numeric: boolean[];
  /** Rows left out past maxRows. */
  more: number;
}

export function tableCells(rows: readonly object[], fields?: readonly string[], opts: TableOptions = {}): TableCells {
  const maxWidth = opts.maxWidth ?? 36;
  const maxRows = opts.maxRows ?? 50;
  const cols = fields && fields.length > 0 ? [...fields] : fieldsOf(rows);
  const shown = rows.slice(0, maxRows);
  // Rows may be any objects (getters included): only names every object has are read as own fields.
  const inherited = cols.map(isInheritedName);
  const raw = shown.map((row) => cols.map((c, i) => (inherited[i] ? ownField(row as Record<string, unknown>, c) : (row as Record<string, unknown>)[c])));
  const isNumber = (v: unknown) => v === null || v === undefined || typeof v === 'number' || typeof v === 'bigint';
  return {
    columns: cols.map((c) => cut(c, maxWidth)),
    rows: raw.map((values) => values.map((v) => cut(cellText(v), maxWidth))),
    numeric: cols.map((_, i) => raw.length > 0 && raw.every((values) => isNumber(values[i]))),
    more: rows.length - shown.length,
  };
}

/** What a table without columns says instead, or undefined when it has some. */
export function emptyTableNote(rows: readonly object[], columns: readonly string[]): string | undefined {
  if (columns.length > 0) return undefined;
  return rows.length === 0 ? '(no rows)' : `(${rows.length} rows without fields)`;
}

export function formatTable(rows: readonly object[], fields?: readonly string[], opts: TableOptions = {}): string {
  const { columns, rows: cells, numeric, more } = tableCells(rows, fields, opts);
  const empty = emptyTableNote(rows, columns);
  if (empty !== undefined) return empty;
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: string[]) =>
    values.map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd();
  const out = [line(columns), widths.map((w) => '─'.repeat(w)).join('  ')];
  for (const r of cells) out.push(line(r));
  if (more > 0) out.push(`… ${more} more rows`);
  return out.join('\n');
}

/** A table that prints as itself: no quotes in the REPL, plain text in a notebook and as JSON. */
export class TextTable {
  readonly text: string;
  readonly rowCount: number;

  constructor(rows: readonly object[], fields?: readonly string[], opts?: TableOptions) {
    this.text = formatTable(rows, fields, opts);
    this.rowCount = rows.length;
  }

  /** A table already laid out as text (a chart with a heading, say). */
  static ofText(text: string, rowCount: number): TextTable {
    const table = Object.create(TextTable.prototype) as { text: string; rowCount: number };
    table.text = text;
    table.rowCount = rowCount;
    return table as TextTable;
  }

  toString(): string {
    return this.text;
  }

  toJSON(): string {
    return this.text;
  }

  [inspect.custom](): string {
    return this.text;
  }
}

/** One bar per label, scaled to `width` characters; dependency-free, reads anywhere. */
export function barChart(data: Readonly<Record<string, number>> | ReadonlyArray<readonly [string, number]>, width = 40): TextTable {
  const entries = Array.isArray(data) ? [...(data as ReadonlyArray<readonly [string, number]>)] : Object.entries(data);
  // Scaled by size: a negative value gets a bar of its size, drawn lighter.
  const max = Math.max(0, ...entries.map(([, v]) => Math.abs(v)));
  const rows = entries.map(([label, value]) => {
    const n = max > 0 ? Math.round((Math.abs(value) / max) * width) : 0;
    return { label, value, bar: `${(value < 0 ? '░' : '█').repeat(n)}${value !== 0 && n === 0 ? '▏' : ''}` };
  });
  return new TextTable(rows, ['label', 'value', 'bar'], { maxWidth: width + 1, maxRows: Infinity });
}
