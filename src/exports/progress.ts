// A one-line progress display for stderr: rows, pages, rate, and the total when known. Redrawn in
// place on a terminal; on a pipe or file, a plain line at most every few seconds.
import type { ExportStream } from './export-stream.ts';

export interface ProgressFigures {
  dataset: string;
  rows: number;
  pages: number;
  splits: number;
  retries: number;
  elapsedMs: number;
  total: { value: number; exact: boolean } | null;
}

export function formatProgress(f: ProgressFigures): string {
  const rate = f.elapsedMs > 0 ? Math.round((f.rows * 1000) / f.elapsedMs) : 0;
  const total = f.total === null ? '' : ` of ${f.total.exact ? '' : '≥'}${f.total.value}`;
  const pct = f.total !== null && f.total.exact && f.total.value > 0 ? ` ${Math.min(100, Math.floor((100 * f.rows) / f.total.value))}%` : '';
  const extra = [f.splits > 0 ? `${f.splits} splits` : '', f.retries > 0 ? `${f.retries} retries` : ''].filter(Boolean).join(', ');
  return `${f.dataset}: ${f.rows}${total} rows${pct}, ${f.pages} pages, ${rate} rows/s${extra ? `, ${extra}` : ''}`;
}

export class ProgressLine {
  readonly #out: NodeJS.WritableStream;
  readonly #tty: boolean;
  readonly #intervalMs: number;
  #last = 0;
  #width = 0;

  constructor(out: NodeJS.WritableStream) {
    this.#out = out;
    this.#tty = (out as { isTTY?: boolean }).isTTY === true;
    this.#intervalMs = this.#tty ? 100 : 2000;
  }

  /** Shows the stream's figures on each page until it ends. */
  follow(stream: ExportStream): void {
    const started = Date.now();
    const figures = (): ProgressFigures => ({
      dataset: stream.dataset.code, ...stream.stats, elapsedMs: Date.now() - started, total: stream.total,
    });
    stream.on('page', () => this.update(formatProgress(figures())));
    stream.once('end', () => this.done(formatProgress(figures())));
  }

  update(text: string, force = false): void {
    const now = Date.now();
    if (!force && now - this.#last < this.#intervalMs) return;
    this.#last = now;
    if (this.#tty) {
      this.#out.write(`\r${text.padEnd(this.#width)}`);
      this.#width = text.length;
    } else {
      this.#out.write(`${text}\n`);
    }
  }

  done(text: string): void {
    this.update(text, true);
    if (this.#tty) this.#out.write('\n');
    this.#width = 0;
  }
}
