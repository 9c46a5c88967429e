// Progress on stderr, one way for every command and the demo: a single line, redrawn in place on
// a terminal; on a pipe or a file, a plain line each time the figures change and never the same
// figures twice, or (the demo's bars) only each finished line.
import type { WriterSummary } from './accounts/writer.ts';
import { counted } from './core/counted.ts';
import { overlapMs, type ExportStream } from './exports/export-stream.ts';
import type { WindowEvent } from './exports/stream-types.ts';

const CLEAR_TO_END = '\u001b[K';
// The rate moves with the clock alone: a line that differs only there says nothing new.
const RATE = /, \d+ (?:rows|records)\/s/g;

function figuresOf(text: string): string {
  return text.replace(RATE, '');
}
const BAR_WIDTH = 24;

export interface ProgressFigures {
  dataset: string;
  rows: number;
  pages: number;
  splits: number;
  retries: number;
  elapsedMs: number;
  total: { value: number; exact: boolean } | null;
  /** Without a total: the share of the load's time span read so far (0..1), when known. */
  covered?: number | null;
}

/** An export's line: rows, pages, rate, and the total (or the share of the span read) when known. */
export function formatProgress(f: ProgressFigures): string {
  const rate = f.elapsedMs > 0 ? Math.round((f.rows * 1000) / f.elapsedMs) : 0;
  const total = f.total === null ? '' : ` of ${f.total.exact ? '' : '≥'}${f.total.value}`;
  const pct = f.total !== null && f.total.exact && f.total.value > 0 ? ` ${Math.min(100, Math.floor((100 * f.rows) / f.total.value))}%` : '';
  const span = f.total === null && typeof f.covered === 'number' ? `, ${Math.floor(100 * Math.max(0, Math.min(1, f.covered)))}% of the time span` : '';
  const extra = [f.splits > 0 ? `${f.splits} splits` : '', f.retries > 0 ? `${f.retries} retries` : ''].filter(Boolean).join(', ');
  const rows = f.total === null ? counted(f.rows, 'row') : `${f.rows}${total} rows`;
  return `${f.dataset}: ${rows}${pct}${span}, ${counted(f.pages, 'page')}, ${rate} rows/s${extra ? `, ${extra}` : ''}`;
}

/**
 * How much of a stream's load the rows read so far stand for. A direct dataset is read in one
 * window, whose total (includeTotal) is the load's. A via dataset is read window by window, each
 * reporting only its own total, so a sum of totals is only the windows begun; there progress is
 * the share of the load's time span in windows ended (in whatever order they end: descending,
 * several at once), with what an interrupted run had read already.
 */
function measure(stream: ExportStream): { total(): ProgressFigures['total']; covered(): number | null } {
  let endedMs = 0;
  stream.on('window', (event: WindowEvent) => {
    const span = stream.timeSpan;
    if (event.phase === 'end' && span !== undefined) endedMs += overlapMs(event.window, span.fromMs, span.toMs);
  });
  const via = stream.dataset.pathKind === 'via';
  const covered = (): number | null => {
    const span = stream.timeSpan;
    if (!via || span === undefined || span.toMs <= span.fromMs) return null;
    return Math.min(1, (span.doneMs + endedMs) / (span.toMs - span.fromMs));
  };
  return { total: () => (via ? null : stream.total), covered };
}

/** A record writer's line (`lender push`, `lender flag`). */
export function formatWriterProgress(name: string, s: WriterSummary, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? Math.round((s.accepted * 1000) / elapsedMs) : 0;
  return `${name}: ${s.received} read, ${s.accepted} accepted, ${s.rejected} rejected, ${s.requests} requests, ${s.retries} retries, ${rate} records/s`;
}

/** A labelled bar; `fraction` in 0..1, or null when the size of the step is not known yet. */
export function formatBar(label: string, fraction: number | null, detail: string): string {
  if (fraction === null) return `${label} [${'·'.repeat(BAR_WIDTH)}] ${detail}`;
  const clamped = Math.max(0, Math.min(1, fraction));
  const full = Math.floor(clamped * BAR_WIDTH);
  return `${label} [${'#'.repeat(full)}${'-'.repeat(BAR_WIDTH - full)}] ${String(Math.floor(clamped * 100)).padStart(3)}% ${detail}`;
}

export interface ProgressLineOptions {
  /** On a pipe or a file: a line per change ('changes', the default), or only the finished
   * lines ('final'). */
  pipe?: 'changes' | 'final';
}

export class ProgressLine {
  readonly #out: NodeJS.WritableStream;
  readonly #tty: boolean;
  readonly #quietOnPipe: boolean;
  #last = 0;
  /** On a pipe: the figures of the last line written, so none is written twice. */
  #lastFigures: string | undefined;
  #parts: {
    code: string;
    started: number;
    done: { rows: number; pages: number; splits: number; retries: number };
    current?: (() => ProgressFigures) | undefined;
  } | undefined;

  constructor(out: NodeJS.WritableStream, opts: ProgressLineOptions = {}) {
    this.#out = out;
    this.#tty = (out as { isTTY?: boolean }).isTTY === true;
    this.#quietOnPipe = opts.pipe === 'final';
  }

  /** Shows `text`: on a terminal unless it was redrawn very recently (forced: always), on a pipe
   * when its figures changed. */
  update(text: string, force = false): void {
    if (!this.#tty) {
      if (!this.#quietOnPipe) this.#pipeLine(text);
      return;
    }
    const now = Date.now();
    // A redraw per page or batch would cost more than the page on a fast local sandbox.
    if (!force && now - this.#last < 100) return;
    this.#last = now;
    this.#out.write(`\r${text}${CLEAR_TO_END}`);
  }

  /** The finished line, left behind (on a pipe, unless the last line already said the same). */
  done(text: string): void {
    if (!this.#tty) {
      this.#pipeLine(text);
      return;
    }
    this.#last = Date.now();
    this.#out.write(`\r${text}${CLEAR_TO_END}\n`);
  }

  #pipeLine(text: string): void {
    const figures = figuresOf(text);
    if (figures === this.#lastFigures) return;
    this.#lastFigures = figures;
    this.#out.write(`${text}\n`);
  }

  /** A message of its own line, clearing the progress line first on a terminal. */
  note(text: string): void {
    this.#out.write(this.#tty ? `\r${CLEAR_TO_END}${text}\n` : `${text}\n`);
  }

  /**
   * For a dataset read as several streams (the parts of a load shared between workers): one line
   * per dataset with the parts' figures summed, finished when a stream of another dataset starts
   * or at `finishParts()`.
   */
  followPart(stream: ExportStream): void {
    const code = stream.dataset.code;
    if (this.#parts?.code !== code) {
      this.finishParts();
      this.#parts = { code, started: Date.now(), done: { rows: 0, pages: 0, splits: 0, retries: 0 } };
    }
    const parts = this.#parts!;
    const figures = (): ProgressFigures => ({
      dataset: code,
      rows: parts.done.rows + stream.stats.rows,
      pages: parts.done.pages + stream.stats.pages,
      splits: parts.done.splits + stream.stats.splits,
      retries: parts.done.retries + stream.stats.retries,
      elapsedMs: Date.now() - parts.started,
      total: null,
    });
    parts.current = figures;
    stream.on('page', () => this.update(formatProgress(figures())));
    stream.once('close', () => {
      for (const k of ['rows', 'pages', 'splits', 'retries'] as const) parts.done[k] += stream.stats[k];
      if (parts.current === figures) parts.current = undefined;
    });
  }

  /** The finished line of the dataset followPart showed last. */
  finishParts(): void {
    const parts = this.#parts;
    if (parts === undefined) return;
    this.#parts = undefined;
    this.done(formatProgress(parts.current?.() ?? { dataset: parts.code, ...parts.done, elapsedMs: Date.now() - parts.started, total: null }));
  }

  /** Shows the stream's figures on each page until it ends. The finished line has no total: the
   * rows an incremental load reads again at its start and drops are in the total, not the rows. */
  follow(stream: ExportStream): void {
    const started = Date.now();
    const progress = measure(stream);
    const figures = (): ProgressFigures => ({
      dataset: stream.dataset.code, ...stream.stats, elapsedMs: Date.now() - started, total: progress.total(), covered: progress.covered(),
    });
    stream.on('page', () => this.update(formatProgress(figures())));
    stream.once('end', () => this.done(formatProgress({ ...figures(), total: null, covered: null })));
  }

  /** A bar for one dataset's stream (see measure). */
  followBar(stream: ExportStream, label: string): void {
    const started = Date.now();
    const progress = measure(stream);
    let finished = false;
    const fraction = (): number | null => {
      const total = progress.total();
      if (total === null) return progress.covered();
      return total.exact && total.value > 0 ? stream.stats.rows / total.value : null;
    };
    const detail = (): string => {
      const seconds = (Date.now() - started) / 1000;
      const rate = seconds > 0 ? Math.round(stream.stats.rows / seconds) : 0;
      return `${counted(stream.stats.rows, 'row')}, ${counted(stream.stats.pages, 'page')}, ${rate} rows/s`;
    };
    const finish = (text: string): void => {
      if (finished) return;
      finished = true;
      this.done(text);
    };
    stream.on('page', () => {
      if (!finished) this.update(formatBar(label, fraction(), detail()));
    });
    stream.once('end', () => finish(formatBar(label, 1, detail())));
    stream.once('error', () => finish(formatBar(label, fraction(), `${detail()} (failed)`)));
  }
}
