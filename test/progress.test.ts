// The one progress renderer of the commands and the demo: what it writes on a terminal and on a
// pipe, how often, and the lines it formats.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { ExportStream } from '../src/exports/export-stream.ts';
import { ProgressLine, formatBar, formatProgress, formatWriterProgress } from '../src/progress.ts';

function output(tty: boolean): NodeJS.WritableStream & { text: string } {
  const out = { text: '', isTTY: tty, write(chunk: string) { out.text += chunk; return true; } };
  return out as unknown as NodeJS.WritableStream & { text: string };
}

/** Enough of an ExportStream for the renderer: its events, stats, total, time span and dataset. */
function fakeStream(pathKind: 'direct' | 'via'): EventEmitter & {
  stats: { rows: number; pages: number; splits: number; retries: number };
  total: { value: number; exact: boolean } | null;
  timeSpan: { fromMs: number; toMs: number; doneMs: number } | undefined;
} {
  return Object.assign(new EventEmitter(), {
    dataset: { code: 'D07', pathKind },
    stats: { rows: 0, pages: 0, windows: 0, splits: 0, retries: 0 },
    total: null as { value: number; exact: boolean } | null,
    timeSpan: undefined as { fromMs: number; toMs: number; doneMs: number } | undefined,
  });
}

const at = (ms: number): string => new Date(ms).toISOString();

describe('ProgressLine', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('on a terminal: redraws in place at most every 100 ms, and leaves the finished line behind', () => {
    const out = output(true);
    const line = new ProgressLine(out);
    line.update('one');
    line.update('skipped');
    mock.timers.tick(100);
    line.update('two');
    line.done('done');
    assert.equal(out.text, '\rone\u001b[K\rtwo\u001b[K\rdone\u001b[K\n');
  });

  it('on a pipe: a plain line per change, at any pace, and the finished line unless it repeats the last', () => {
    const out = output(false);
    const line = new ProgressLine(out);
    line.update('push: 1 read, 0 accepted, 0 rejected, 1 requests, 0 retries, 0 records/s');
    line.update('push: 2 read, 1 accepted, 0 rejected, 1 requests, 0 retries, 10 records/s');
    // The same figures again, at another rate (the clock moved): nothing new to say.
    mock.timers.tick(5_000);
    line.update('push: 2 read, 1 accepted, 0 rejected, 1 requests, 0 retries, 3 records/s');
    line.done('push: 2 read, 1 accepted, 0 rejected, 1 requests, 0 retries, 2 records/s');
    assert.equal(out.text, [
      'push: 1 read, 0 accepted, 0 rejected, 1 requests, 0 retries, 0 records/s',
      'push: 2 read, 1 accepted, 0 rejected, 1 requests, 0 retries, 10 records/s',
      '',
    ].join('\n'));
  });

  it('on a pipe: a finished line with new figures is written, and no line is ever written twice in a row', () => {
    const out = output(false);
    const line = new ProgressLine(out);
    const texts = ['a: 1 row, 1 page, 5 rows/s', 'a: 1 row, 1 page, 6 rows/s', 'a: 2 rows, 2 pages, 6 rows/s', 'a: 2 rows, 2 pages, 6 rows/s'];
    for (const t of texts) line.update(t);
    line.done('a: 3 rows, 3 pages, 7 rows/s');
    const lines = out.text.trimEnd().split('\n');
    assert.deepEqual(lines, ['a: 1 row, 1 page, 5 rows/s', 'a: 2 rows, 2 pages, 6 rows/s', 'a: 3 rows, 3 pages, 7 rows/s']);
  });

  it("pipe: 'final' writes only finished lines on a pipe, and redraws as usual on a terminal", () => {
    const pipe = output(false);
    const quiet = new ProgressLine(pipe, { pipe: 'final' });
    quiet.update('one', true);
    quiet.done('done');
    assert.equal(pipe.text, 'done\n');
    const tty = output(true);
    const bar = new ProgressLine(tty, { pipe: 'final' });
    bar.update('one');
    bar.done('done');
    assert.equal(tty.text, '\rone\u001b[K\rdone\u001b[K\n');
  });

  it('a note clears the progress line on a terminal and is a plain line on a pipe', () => {
    const tty = output(true);
    new ProgressLine(tty).note('warning');
    assert.equal(tty.text, '\r\u001b[Kwarning\n');
    const pipe = output(false);
    new ProgressLine(pipe).note('warning');
    assert.equal(pipe.text, 'warning\n');
  });

  it("follow() shows an export's figures per page and the finished line at its end", () => {
    const out = output(false);
    const stream = fakeStream('direct');
    new ProgressLine(out).follow(stream as unknown as ExportStream);
    stream.stats.rows = 10;
    stream.stats.pages = 1;
    stream.emit('page');
    mock.timers.tick(1_000);
    stream.stats.rows = 20;
    stream.stats.pages = 2;
    stream.emit('end');
    assert.equal(out.text, 'D07: 10 rows, 1 page, 0 rows/s\nD07: 20 rows, 2 pages, 20 rows/s\n');
  });

  it('follow() on a via dataset: the share of the time span read, never a sum of the totals of the windows begun', () => {
    const out = output(false);
    const stream = fakeStream('via');
    new ProgressLine(out).follow(stream as unknown as ExportStream);
    stream.timeSpan = { fromMs: 0, toMs: 1_000_000, doneMs: 0 };
    stream.emit('window', { phase: 'start', window: { since: at(0), until: at(250_000) } });
    stream.total = { value: 281, exact: true };
    stream.stats.rows = 281;
    stream.stats.pages = 1;
    stream.emit('page');
    stream.emit('window', { phase: 'end', window: { since: at(0), until: at(250_000) } });
    stream.stats.rows = 300;
    stream.stats.pages = 2;
    stream.emit('page');
    stream.emit('end');
    assert.equal(out.text, [
      'D07: 281 rows, 0% of the time span, 1 page, 0 rows/s',
      'D07: 300 rows, 25% of the time span, 2 pages, 0 rows/s',
      'D07: 300 rows, 2 pages, 0 rows/s',
      '',
    ].join('\n'));
  });

  it('follow() on a via dataset read newest first, or windows ending out of order: the share still grows with each window ended', () => {
    const out = output(false);
    const stream = fakeStream('via');
    new ProgressLine(out).follow(stream as unknown as ExportStream);
    // An interrupted run had read a tenth of the span; the last window is open at the top.
    stream.timeSpan = { fromMs: 0, toMs: 1_000_000, doneMs: 100_000 };
    const shown: string[] = [];
    for (const window of [{ since: at(700_000), until: null }, { since: at(400_000), until: at(700_000) }, { since: at(100_000), until: at(400_000) }]) {
      stream.emit('window', { phase: 'start', window });
      stream.emit('window', { phase: 'end', window });
      stream.stats.pages += 1;
      stream.stats.rows += 10;
      stream.emit('page');
      shown.push(out.text.trimEnd().split('\n').at(-1)!);
    }
    assert.deepEqual(shown.map((line) => /(\d+)% of the time span/.exec(line)?.[1]), ['40', '70', '100']);
  });

  it('follow() on a direct dataset: rows of the total while it runs; the finished line without it', () => {
    const out = output(false);
    const stream = fakeStream('direct');
    new ProgressLine(out).follow(stream as unknown as ExportStream);
    // An incremental load: the total counts the boundary rows it reads again and drops.
    stream.total = { value: 50, exact: true };
    stream.stats.rows = 20;
    stream.stats.pages = 1;
    stream.emit('page');
    stream.stats.rows = 25;
    stream.emit('end');
    assert.equal(out.text, 'D07: 20 of 50 rows 40%, 1 page, 0 rows/s\nD07: 25 rows, 1 page, 0 rows/s\n');
  });

  it('followBar() finishes a bar once, full at the end, and marks a failed stream', () => {
    const done = output(false);
    const stream = fakeStream('direct');
    new ProgressLine(done, { pipe: 'final' }).followBar(stream as unknown as ExportStream, 'D07     ');
    stream.stats.rows = 5;
    stream.emit('page');
    stream.emit('end');
    stream.emit('error', new Error('late'));
    assert.equal(done.text, `D07      [${'#'.repeat(24)}] 100% 5 rows, 0 pages, 0 rows/s\n`);

    const failed = output(false);
    const broken = fakeStream('direct');
    broken.total = { value: 10, exact: true };
    new ProgressLine(failed, { pipe: 'final' }).followBar(broken as unknown as ExportStream, 'D07');
    broken.stats.rows = 5;
    broken.emit('error', new Error('gone'));
    assert.equal(failed.text, `D07 [${'#'.repeat(12)}${'-'.repeat(12)}]  50% 5 rows, 0 pages, 0 rows/s (failed)\n`);
  });
});

describe('progress lines', () => {
  it('formatProgress: rows against the total, rate, splits and retries', () => {
    assert.equal(
      formatProgress({ dataset: 'D23', rows: 50, pages: 2, splits: 1, retries: 3, elapsedMs: 1000, total: { value: 200, exact: true } }),
      'D23: 50 of 200 rows 25%, 2 pages, 50 rows/s, 1 splits, 3 retries',
    );
    assert.equal(formatProgress({ dataset: 'D23', rows: 5, pages: 1, splits: 0, retries: 0, elapsedMs: 0, total: { value: 10_000, exact: false } }),
      'D23: 5 of ≥10000 rows, 1 page, 0 rows/s');
  });

  it("formatWriterProgress: the writer's counts and its rate of accepted records", () => {
    const summary = { received: 30, accepted: 20, rejected: 1, rejectedByReason: {}, batches: 2, requests: 3, retries: 4, bytes: 0 };
    assert.equal(formatWriterProgress('push', summary, 2000), 'push: 30 read, 20 accepted, 1 rejected, 3 requests, 4 retries, 10 records/s');
    assert.equal(formatWriterProgress('flag', summary, 0), 'flag: 30 read, 20 accepted, 1 rejected, 3 requests, 4 retries, 0 records/s');
  });

  it('formatBar: clamped to 0..100%, dotted when the size is not known', () => {
    assert.equal(formatBar('push', 0.5, 'x'), `push [${'#'.repeat(12)}${'-'.repeat(12)}]  50% x`);
    assert.equal(formatBar('push', 1.7, 'x'), `push [${'#'.repeat(24)}] 100% x`);
    assert.equal(formatBar('push', -1, 'x'), `push [${'-'.repeat(24)}]   0% x`);
    assert.equal(formatBar('push', null, 'x'), `push [${'·'.repeat(24)}] x`);
  });
});
