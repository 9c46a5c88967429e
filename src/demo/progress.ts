// Progress bars on stderr for the demo: one per step (the push, then each dataset of the sync).
// On a terminal the current bar is redrawn in place and left behind, finished, when its step ends;
// on a pipe or a file (CI logs, tests) only the finished line is written, so logs stay short.
import type { ExportStream } from '../exports/export-stream.ts';

const WIDTH = 24;

/** `fraction` in 0..1, or null when the size of the step is not known yet. */
export function renderBar(fraction: number | null, width = WIDTH): string {
  if (fraction === null) return `[${'·'.repeat(width)}]`;
  const clamped = Math.max(0, Math.min(1, fraction));
  const full = Math.floor(clamped * width);
  return `[${'#'.repeat(full)}${'-'.repeat(width - full)}] ${String(Math.floor(clamped * 100)).padStart(3)}%`;
}

export class BarLine {
  readonly #out: NodeJS.WritableStream;
  readonly #tty: boolean;
  readonly #label: string;
  #last = 0;
  #width = 0;
  #done = false;

  constructor(out: NodeJS.WritableStream, label: string) {
    this.#out = out;
    this.#tty = (out as { isTTY?: boolean }).isTTY === true;
    this.#label = label;
  }

  update(fraction: number | null, detail: string): void {
    if (!this.#tty || this.#done) return;
    const now = Date.now();
    // A redraw per page would cost more than the page on a fast local sandbox.
    if (now - this.#last < 80) return;
    this.#last = now;
    this.#draw(`${this.#label} ${renderBar(fraction)} ${detail}`);
  }

  finish(detail: string, fraction: number | null = 1): void {
    if (this.#done) return;
    this.#done = true;
    const text = `${this.#label} ${renderBar(fraction)} ${detail}`;
    if (this.#tty) {
      this.#draw(text);
      this.#out.write('\n');
    } else {
      this.#out.write(`${text}\n`);
    }
  }

  #draw(text: string): void {
    this.#out.write(`\r${text.padEnd(this.#width)}`);
    this.#width = text.length;
  }
}

/**
 * A bar that follows one dataset's export stream. Direct datasets are read in one window, so rows
 * against the total the service reports (includeTotal) measure progress. Via datasets are read
 * month by month and each window reports only its own total, so there progress is the share of
 * the load's time span already covered by finished windows.
 */
export function followDataset(out: NodeJS.WritableStream, stream: ExportStream, label: string): BarLine {
  const bar = new BarLine(out, label);
  const started = Date.now();
  let spanStart: number | undefined;
  const spanEnd = Date.now();
  let covered: number | null = null;
  const fraction = (): number | null => {
    if (stream.dataset.pathKind === 'via') return covered;
    const total = stream.total;
    return total !== null && total.exact && total.value > 0 ? stream.stats.rows / total.value : null;
  };
  const detail = (): string => {
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? Math.round(stream.stats.rows / seconds) : 0;
    return `${stream.stats.rows} rows, ${stream.stats.pages} pages, ${rate} rows/s`;
  };
  stream.on('window', (event: { phase: 'start' | 'end'; window: { since: string | null; until: string | null } }) => {
    if (event.phase === 'start' && spanStart === undefined && event.window.since !== null) spanStart = Date.parse(event.window.since);
    if (event.phase === 'end' && spanStart !== undefined && event.window.until !== null && spanEnd > spanStart) {
      covered = (Date.parse(event.window.until) - spanStart) / (spanEnd - spanStart);
    }
  });
  stream.on('page', () => bar.update(fraction(), detail()));
  stream.once('end', () => bar.finish(detail()));
  stream.once('error', () => bar.finish(`${detail()} (failed)`, fraction()));
  return bar;
}
