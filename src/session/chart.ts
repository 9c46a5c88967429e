// Charts: what chart() takes, read into one model, drawn either as text (REPL, terminal) or as a
// Vega-Lite spec rendered to SVG (notebooks). The SVG is rendered in Node by vega and vega-lite,
// with no browser and no canvas; they are imported only when a chart is rendered, so the CLI,
// the REPL and the library's entry never load them.
import { createHash } from 'node:crypto';
import { ConfigError } from '../core/errors.ts';
import { escapeHtml } from './html.ts';
import type { NotebookDisplay } from './notebook.ts';
import { TextTable, barChart, formatTable } from './table.ts';

/** Label → value, as an object or as [label, value] pairs: one bar per label. */
export type LabelValues = Readonly<Record<string, number>> | ReadonlyArray<readonly [string, number]>;

/** A Vega-Lite spec (https://vega.github.io/vega-lite/), taken as it is. */
export type VegaLiteSpec = Readonly<Record<string, unknown>>;

/** What chart() draws: label → value pairs, rows with `{ x, y, color }` options, or a full Vega-Lite spec. */
export type ChartData = LabelValues | readonly object[] | VegaLiteSpec;

/** How chart() draws rows (with label → value pairs, only `mark`, `title` and `textWidth` apply). */
export interface ChartOptions {
  /** 'bar' (default; stacked when `color` is given) or 'line' (one line per `color` value). */
  mark?: 'bar' | 'line';
  /** The field of the rows along the x axis: categories, or months as 'YYYY-MM'. */
  x?: string;
  /** The field summed per x (and color). Default: rows are counted. */
  y?: string;
  /** The field that splits each bar into stacked parts, or the line into one line per value. */
  color?: string;
  title?: string;
  /** Widest bar of the text form, in characters. Default 40. */
  textWidth?: number;
}

interface Point {
  x: string;
  y: number;
  c?: string;
}

/** The chart as read from chart()'s arguments: a series of points, or a spec taken as given. */
export type ChartModel =
  | { kind: 'series'; mark: 'bar' | 'line'; points: Point[]; names: { x: string; y: string; c?: string }; horizontal: boolean; title?: string; textWidth: number }
  | { kind: 'spec'; spec: VegaLiteSpec };

// Keys only a Vega-Lite spec has at its top (a label → value object has numbers as values).
const SPEC_KEYS = ['$schema', 'mark', 'layer', 'concat', 'hconcat', 'vconcat', 'facet', 'repeat', 'spec'];

const USAGE = 'chart() takes { label: number }, [label, number] pairs, rows with { x, y, color } options, or a Vega-Lite spec';

function isPair(value: unknown): value is readonly [string, number] {
  return Array.isArray(value) && value.length === 2 && typeof value[1] === 'number';
}

function isSpec(data: object): data is VegaLiteSpec {
  return !Array.isArray(data) && SPEC_KEYS.some((k) => k in data);
}

/** A label or an x value as text: dates as ISO instants, the rest as written. */
function labelOf(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return value === null || value === undefined ? '' : String(value);
}

/** A y value as a finite number (bigint from SQL too), null to leave the row out. */
function numberOf(value: unknown, field: string, index: number): number | null {
  if (value === null || value === undefined) return null;
  const n = typeof value === 'bigint' ? Number(value) : typeof value === 'number' ? value : Number.NaN;
  if (!Number.isFinite(n)) throw new ConfigError(`chart(): the field '${field}' of row ${index + 1} is not a finite number`);
  return n;
}

/** Reads chart()'s arguments; throws a ConfigError saying what it takes when they fit no form. */
export function chartModel(data: ChartData, opts: ChartOptions = {}): ChartModel {
  const mark = opts.mark ?? 'bar';
  if (mark !== 'bar' && mark !== 'line') throw new ConfigError(`chart(): mark must be 'bar' or 'line', not '${String(mark)}'`);
  const textWidth = opts.textWidth ?? 40;
  const title = opts.title === undefined ? {} : { title: opts.title };
  if (data === null || typeof data !== 'object') throw new ConfigError(USAGE);
  if (isSpec(data)) return { kind: 'spec', spec: data };
  if (!Array.isArray(data)) {
    const entries = Object.entries(data);
    if (!entries.every(([, v]) => typeof v === 'number')) throw new ConfigError(USAGE);
    return labelValues(entries as unknown as [string, number][], mark, title, textWidth);
  }
  const list = data as readonly unknown[];
  if (list.every(isPair)) return labelValues(list as [string, number][], mark, title, textWidth);
  if (opts.x === undefined) throw new ConfigError(`${USAGE}; rows need at least { x: 'a field' }`);
  const { x, y, color } = opts;
  // Summed per (x, color), in the order first seen: the caller sorts the rows as they want them drawn.
  const sums = new Map<string, Point>();
  list.forEach((row, i) => {
    if (row === null || typeof row !== 'object') throw new ConfigError(`${USAGE}; row ${i + 1} is not an object`);
    const r = row as Record<string, unknown>;
    const value = y === undefined ? 1 : numberOf(r[y], y, i);
    if (value === null) return;
    const point: Point = { x: labelOf(r[x]), y: 0, ...(color !== undefined && { c: labelOf(r[color]) }) };
    const key = JSON.stringify([point.x, point.c]);
    const sum = sums.get(key) ?? point;
    sum.y += value;
    sums.set(key, sum);
  });
  return {
    kind: 'series', mark, points: [...sums.values()], horizontal: false, textWidth, ...title,
    names: { x, y: y ?? 'rows', ...(color !== undefined && { c: color }) },
  };
}

function labelValues(entries: readonly (readonly [string, number])[], mark: 'bar' | 'line', title: { title?: string }, textWidth: number): ChartModel {
  const points = entries.map(([label, value]) => {
    if (!Number.isFinite(value)) throw new ConfigError(`chart(): the value of '${label}' is not a finite number`);
    return { x: String(label), y: value };
  });
  // Labels (failure reasons, statuses) read best down the side, as bars across.
  return { kind: 'series', mark, points, names: { x: 'label', y: 'value' }, horizontal: mark === 'bar', textWidth, ...title };
}

// ---- text

/** The chart as text: one bar per label or x; with a color field, a column per color value and a bar of their total. */
export function textChart(model: ChartModel): TextTable {
  if (model.kind === 'spec') return specText(model.spec);
  const { points, names } = model;
  const heading = model.title === undefined ? '' : `${model.title}\n`;
  if (names.c === undefined) {
    const table = barChart(points.map((p) => [p.x, p.y] as [string, number]), model.textWidth);
    return heading === '' ? table : TextTable.ofText(`${heading}${table.text}`, table.rowCount);
  }
  const colors = [...new Set(points.map((p) => p.c!))];
  const byX = new Map<string, Record<string, number>>();
  for (const p of points) {
    const row = byX.get(p.x) ?? Object.fromEntries(colors.map((c) => [c, 0]));
    row[p.c!] = (row[p.c!] ?? 0) + p.y;
    byX.set(p.x, row);
  }
  const totals = [...byX.values()].map((row) => Object.values(row).reduce((a, b) => a + b, 0));
  const max = Math.max(0, ...totals);
  const rows = [...byX.entries()].map(([x, row], i) => {
    const n = max > 0 ? Math.round((totals[i]! / max) * model.textWidth) : 0;
    return { [names.x]: x, ...row, total: totals[i]!, bar: '█'.repeat(n) };
  });
  const table = formatTable(rows, [names.x, ...colors, 'total', 'bar'], { maxWidth: model.textWidth + 1, maxRows: Infinity });
  return TextTable.ofText(`${heading}${table}`, rows.length);
}

function specText(spec: VegaLiteSpec): TextTable {
  const mark = spec.mark;
  const markName = typeof mark === 'string' ? mark : typeof (mark as { type?: unknown } | undefined)?.type === 'string' ? (mark as { type: string }).type : 'layered';
  const values = (spec.data as { values?: unknown } | undefined)?.values;
  const rows = Array.isArray(values) ? values.filter((v): v is object => v !== null && typeof v === 'object') : [];
  const head = `Vega-Lite chart (${markName}${Array.isArray(values) ? `, ${values.length} data values` : ''}); drawn as SVG in a notebook`;
  return TextTable.ofText(rows.length === 0 ? head : `${head}\n${formatTable(rows, undefined, { maxRows: 20 })}`, rows.length);
}

// ---- Vega-Lite

export const VEGA_LITE_SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

// Plain and small: white background, no frame around the plot, a system font.
const CONFIG = { background: 'white', font: 'sans-serif', view: { stroke: null }, axis: { labelLimit: 180 } };

/** The Vega-Lite spec of a chart: a series as bars (stacked by color) or lines, or the spec given. */
export function chartSpec(model: ChartModel): VegaLiteSpec {
  if (model.kind === 'spec') return model.spec;
  const { points, names } = model;
  // The data's own fields are x, y and c: a field name holding a dot or a bracket would mean a
  // nested field to Vega-Lite. The axes carry the caller's names.
  const category = { field: 'x', type: 'ordinal', sort: null, title: names.x };
  const amount = { field: 'y', type: 'quantitative', title: names.y };
  const color = names.c === undefined ? {} : { color: { field: 'c', type: 'nominal', sort: null, title: names.c } };
  const many = new Set(points.map((p) => p.x)).size > 30;
  return {
    $schema: VEGA_LITE_SCHEMA,
    ...(model.title !== undefined && { title: model.title }),
    data: { values: points },
    mark: model.mark === 'line' ? { type: 'line', point: true } : { type: 'bar' },
    encoding: model.horizontal ? { y: category, x: amount, ...color } : { x: category, y: amount, ...color },
    // Bars keep their width up to 30 categories, then share a fixed width.
    ...(many && (model.horizontal ? { height: 600 } : { width: 600 })),
    ...(!model.horizontal && { height: 220 }),
    config: CONFIG,
  };
}

/**
 * Renders a Vega-Lite spec to an SVG document. The same spec gives the same SVG: the ids vega
 * numbers per process (clip paths, gradients) are restarted and prefixed with a hash of the spec,
 * so two charts on one page never share one.
 */
export function renderSvg(spec: VegaLiteSpec): Promise<string> {
  // One at a time: vega's id counters are shared by the process, and restarted for each chart.
  const svg = rendering.then(() => renderNow(spec));
  rendering = svg.catch(() => undefined);
  return svg;
}

let rendering: Promise<unknown> = Promise.resolve();

async function renderNow(spec: VegaLiteSpec): Promise<string> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  let compiled;
  try {
    compiled = vegaLite.compile(spec as unknown as Parameters<typeof vegaLite.compile>[0]).spec;
  } catch (error) {
    throw new ConfigError(`chart(): Vega-Lite refused the spec: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  // A spec may name its data by URL: local files and HTTPS only, never plain HTTP.
  const loader = vega.loader({ defaultProtocol: 'https' });
  const sanitize = loader.sanitize.bind(loader);
  loader.sanitize = async (uri, options) => {
    const target = await sanitize(uri, options);
    const local = (target as { localFile?: boolean }).localFile === true;
    if (!local && !/^https:/i.test(target.href)) throw new ConfigError(`chart(): data is loaded over HTTPS only, not from ${new URL(target.href).protocol}`);
    return target;
  };
  // Vega logs what goes wrong while it runs (data that cannot be loaded is only a warning) and
  // draws on: the first such failure fails the chart instead, rather than an empty chart being shown.
  const errors: unknown[] = [];
  const logger = vega.logger(vega.Warn);
  const warn = logger.warn.bind(logger);
  logger.error = (...args: readonly unknown[]) => {
    errors.push(args[0]);
    return logger;
  };
  logger.warn = (...args: readonly unknown[]) => {
    if (args[0] === 'Loading failed') errors.push(args[2] ?? `could not load ${String(args[1])}`);
    // An empty chart's scales have no extent: drawn empty, as asked, without the warning.
    else if (!/^Infinite extent for field/.test(String(args[0]))) warn(...args);
    return logger;
  };
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', loader, logger });
  try {
    vega.resetSVGDefIds();
    const svg = await view.toSVG();
    if (errors.length > 0) {
      const first = errors[0];
      throw first instanceof ConfigError ? first : new ConfigError(`chart(): vega could not draw the chart: ${first instanceof Error ? first.message : String(first)}`, { cause: first });
    }
    const prefix = `c${createHash('sha256').update(JSON.stringify(spec, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))).digest('hex').slice(0, 8)}-`;
    return svg.replace(/\b(id="|url\(#|href="#)(clip\d+|gradient_\d+)/g, `$1${prefix}$2`);
  } finally {
    view.finalize();
  }
}

/** The SVG document of a chart, what a notebook shows (to save to a file, say). */
export function chartSvg(data: ChartData, opts?: ChartOptions): Promise<string> {
  return renderSvg(chartSpec(chartModel(data, opts)));
}

/**
 * Draws the chart into a notebook cell. One that cannot be drawn shows its error in the cell
 * instead of rejecting: a chart() left un-awaited would otherwise fail unseen, as an unhandled
 * rejection that may end the kernel.
 */
export async function showChart(display: NotebookDisplay, model: ChartModel): Promise<void> {
  let svg: string;
  try {
    svg = await renderSvg(chartSpec(model));
  } catch (error) {
    display.html(`<pre>${escapeHtml(error instanceof Error ? error.message : String(error))}</pre>`);
    return;
  }
  display.svg(svg);
}
