// describe(): what a dataset holds, for a first look: its fields with their types, the share of
// nulls and the distinct values among the first rows, the span of its cursor field and its row
// count. The field statistics are of a sample (the first rows, oldest first), said as such; the
// span and the count are of the whole dataset.
import { inspect } from 'node:util';
import type { ServiceApi } from '../core/api.ts';
import { datasetInfo } from '../core/catalog.ts';
import type { DatasetRef, ExportRow } from '../core/types.ts';
import { exportRows } from '../exports/export-stream.ts';
import { typeOf, type ColumnType } from '../sinks/columns.ts';
import { codeOf, countRows } from './count.ts';
import { escapeHtml, htmlTable } from './html.ts';
import { notebookDisplay } from './notebook.ts';
import type { Count } from './results.ts';
import { formatTable } from './table.ts';

/** Options of `session.describe()`. */
export interface DescribeOptions {
  /** Rows read for the field statistics (the first ones, oldest first). Default 1000. */
  sample?: number;
  signal?: AbortSignal;
}

/** One field of a dataset, as seen in the sample. */
export interface FieldSummary {
  field: string;
  /** integer, number, boolean, timestamp, text or json; two joined by '|' when the sample holds both; 'null' when it holds only nulls. */
  type: string;
  /** Share of the sampled rows where the field is null or missing, e.g. '12.5%'. */
  nulls: string;
  /** Distinct non-null values in the sample. */
  distinct: number;
}

const TYPE_NAMES: Readonly<Record<ColumnType, string>> = {
  bigint: 'integer', double: 'number', boolean: 'boolean', timestamptz: 'timestamp', text: 'text', json: 'json',
};

/** The fields of the rows, in first-seen order, with their types, null shares and distinct counts. */
export function summarizeFields(rows: readonly ExportRow[]): FieldSummary[] {
  const fields = new Map<string, { types: Set<ColumnType>; present: number; values: Set<string> }>();
  for (const row of rows) {
    for (const [name, value] of Object.entries(row)) {
      const f = fields.get(name) ?? { types: new Set(), present: 0, values: new Set() };
      fields.set(name, f);
      const type = typeOf(value);
      if (type === null) continue;
      f.types.add(type);
      f.present += 1;
      // Typed keys: the number 1 and the text "1" are two values.
      f.values.add(`${typeof value}:${typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
    }
  }
  return [...fields].map(([field, f]) => {
    // Whole and fractional numbers are one kind of number.
    if (f.types.has('bigint') && f.types.has('double')) f.types.delete('bigint');
    const nulls = rows.length === 0 ? 0 : (rows.length - f.present) / rows.length;
    return {
      field,
      type: f.types.size === 0 ? 'null' : [...f.types].map((t) => TYPE_NAMES[t]).sort().join('|'),
      nulls: `${(100 * nulls).toFixed(1)}%`,
      distinct: f.values.size,
    };
  });
}

/** What describe() found: the dataset's fields (an array of FieldSummary) and its span and count. */
export class Description extends Array<FieldSummary> {
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }

  dataset = '';
  name = '';
  /** Rows the field statistics were taken from. */
  sampled = 0;
  cursor: { field: string; first: string | null; last: string | null } = { field: '', first: null, last: null };
  /** The row count (includeTotal; via datasets month by month). */
  total: Count | undefined;

  static create(parts: Pick<Description, 'dataset' | 'name' | 'sampled' | 'cursor' | 'total'>, fields: readonly FieldSummary[]): Description {
    const d = new Description();
    Object.assign(d, parts);
    d.push(...fields);
    return d;
  }

  /** One line: the dataset, its rows, its cursor's span and the sample. */
  heading(): string {
    const total = this.total?.total;
    const rows = total === null || total === undefined ? 'rows not counted' : `${this.total!.exact ? '' : 'at least '}${total.toLocaleString('en-US')} rows`;
    const span = this.cursor.first === null ? 'no rows' : `${this.cursor.field} from ${this.cursor.first} to ${this.cursor.last}`;
    return `${this.dataset}${this.name === '' ? '' : ` ${this.name}`}: ${rows}, ${span}; fields of the first ${this.sampled.toLocaleString('en-US')} rows:`;
  }

  html(): string {
    return `<p>${escapeHtml(this.heading())}</p>\n${htmlTable(this, ['field', 'type', 'nulls', 'distinct'], { maxRows: Infinity })}`;
  }

  toJSON(): object {
    return { dataset: this.dataset, name: this.name, total: this.total?.toJSON(), cursor: this.cursor, sampled: this.sampled, fields: [...this] };
  }

  [inspect.custom](): string {
    // In a notebook the table was shown as HTML when it came: the value says only what it is.
    if (notebookDisplay() !== undefined) return `Description of ${this.dataset}: ${this.length} fields`;
    return `${this.heading()}\n${formatTable(this, ['field', 'type', 'nulls', 'distinct'], { maxRows: Infinity })}`;
  }
}

/** Reads the sample, the first and last values of the cursor field, and the count, at once. */
export async function describeDataset(api: ServiceApi, ref: DatasetRef, opts: DescribeOptions = {}): Promise<Description> {
  const sample = opts.sample ?? 1000;
  if (!Number.isSafeInteger(sample) || sample < 1) throw new RangeError(`describe(): sample must be a whole number of rows, 1 or more, not ${sample}`);
  const code = codeOf(ref);
  // One signal for the three reads: when one fails, the others stop rather than go on unheard
  // (a via count, month by month, may take many requests).
  const failed = new AbortController();
  const signal = opts.signal === undefined ? failed.signal : AbortSignal.any([opts.signal, failed.signal]);
  const stopOthers = <T>(read: Promise<T>): Promise<T> => read.catch((error: unknown) => {
    failed.abort(error);
    throw error;
  });
  const first = async (sort: 'asc' | 'desc', limit: number): Promise<ExportRow[]> => {
    const rows: ExportRow[] = [];
    const stream = exportRows(api, ref, { sort, limit: Math.min(limit, 1000), signal });
    for await (const row of stream) {
      rows.push(row as ExportRow);
      if (rows.length >= limit) break;
    }
    return rows;
  };
  const [rows, [latest], total] = await Promise.all([
    stopOthers(first('asc', sample)),
    stopOthers(first('desc', 1)),
    stopOthers(countRows(api, ref, { signal })),
  ]);
  const info = datasetInfo(code);
  const field = info?.cursorField ?? 'updated_at';
  const at = (row: ExportRow | undefined): string | null => {
    const value = row?.[field];
    return value === undefined || value === null ? null : String(value);
  };
  return Description.create({
    dataset: code, name: info?.name ?? '', sampled: rows.length, total,
    cursor: { field, first: at(rows[0]), last: at(latest) },
  }, summarizeFields(rows));
}
