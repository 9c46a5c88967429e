// Which parts of a load are done and what is left to read (pure). A load records the spans it
// completed (windows merged as they end, in any order) and the windows it is part-way through,
// so windows read in parallel are handed over without waiting for each other and a resume reads
// only what is unfinished. The contiguous run of completed spans from the load's start is where
// a strictly ordered reader would stand.
import type { ValueMark } from './highwater.ts';
import type { LoadPosition, LoadRecord } from './state.ts';
import { isoOf, planWindows, type Window } from './windows.ts';

/** How far a load got: what `LoadRecord.progress` keeps. */
export interface LoadProgress {
  /** Completed spans of the load, merged and in ascending order; an open side is null. */
  done: Window[];
  /** Windows read part-way: the position after the last page delivered in each. */
  open: LoadPosition[];
}

/** One window still to read, possibly part-way through. */
export interface WindowTask {
  window: Window;
  cursor: string | null;
  last: ValueMark | null;
}

/** A span [from, to) in epoch milliseconds; an open side is -Infinity or Infinity. */
type Span = readonly [number, number];

const lowOf = (since: string | null): number => (since === null ? -Infinity : Date.parse(since));
const highOf = (until: string | null): number => (until === null ? Infinity : Date.parse(until));
const spanOf = (w: Window): Span => [lowOf(w.since), highOf(w.until)];
const windowOf = ([a, b]: Span): Window => ({ since: a === -Infinity ? null : isoOf(a), until: b === Infinity ? null : isoOf(b) });

/** The spans merged where they touch or overlap, ascending; empty spans dropped. */
function merge(spans: readonly Span[]): Span[] {
  const sorted = spans.filter(([a, b]) => a < b).sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const top = out.at(-1);
    if (top !== undefined && a <= top[1]) top[1] = Math.max(top[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** `from` less every span of `cut`. */
function subtract(from: readonly Span[], cut: readonly Span[]): Span[] {
  let pieces = [...from];
  for (const [c, d] of cut) {
    pieces = pieces.flatMap(([a, b]): Span[] => {
      if (d <= a || c >= b) return [[a, b]];
      const pieces: Span[] = [[a, Math.min(b, c)], [Math.max(a, d), b]];
      return pieces.filter(([x, y]) => x < y);
    });
  }
  return pieces;
}

/** The completed spans with `extra` added, merged. */
export function withDone(done: readonly Window[], ...extra: Window[]): Window[] {
  return merge([...done, ...extra].map(spanOf)).map(windowOf);
}

/**
 * The part of a window `task` that is done once `at` was delivered. A window is walked in
 * delivery order, possibly as smaller windows (a 504 split, a grown window read in months), and
 * `at.window` is the one being walked: everything before it (asc) or after it (desc) is done,
 * and itself too once its cursor is null.
 */
export function donePart(task: Window, at: LoadPosition, sort: 'asc' | 'desc'): Window | null {
  const [a, b] = spanOf(task);
  const [c, d] = spanOf(at.window);
  const span: Span = sort === 'asc' ? [a, at.cursor === null ? d : c] : [at.cursor === null ? c : d, b];
  return span[0] < span[1] ? windowOf(span) : null;
}

/**
 * The progress a load record holds. A record written before loads kept their windows
 * individually has only `position`: the windows were read one after another, so everything
 * before the position's window is done.
 */
export function progressOf(load: LoadRecord): LoadProgress {
  if (load.progress !== undefined) return { done: load.progress.done.map((w) => ({ ...w })), open: load.progress.open.map((p) => ({ ...p })) };
  const pos = load.position;
  if (pos === null) return { done: [], open: [] };
  const whole: Window = { since: load.since, until: load.until };
  const done = donePart(whole, pos, load.sort);
  return { done: done === null ? [] : [done], open: pos.cursor === null ? [] : [{ ...pos }] };
}

/**
 * The windows left in a load, in delivery order: the windows read part-way (from their cursor)
 * and fresh windows planned over the spans nobody read yet. The value passed to next() is the
 * span in units of the window after the one just taken (see planWindows).
 */
export function* remainingTasks(load: LoadRecord, progress: LoadProgress = progressOf(load)): Generator<WindowTask, void, number | undefined> {
  const whole = spanOf({ since: load.since, until: load.until });
  const open = progress.open.map((position) => ({ position, span: spanOf(position.window) }));
  const gaps = subtract(subtract([whole], merge(progress.done.map(spanOf))), open.map((o) => o.span));
  const segments = [
    ...open.map((o) => ({ from: o.span[0], position: o.position as LoadPosition | null, gap: null as Span | null })),
    ...gaps.map((g) => ({ from: g[0], position: null, gap: g })),
  ].sort((x, y) => x.from - y.from);
  if (load.sort === 'desc') segments.reverse();
  for (const segment of segments) {
    if (segment.position !== null) {
      const { window, cursor, last } = segment.position;
      yield { window, cursor, last };
      continue;
    }
    const gap = windowOf(segment.gap!);
    yield* tasksOf(planWindows({ since: gap.since, until: gap.until, end: load.end, windowing: load.windowing, sort: load.sort }));
  }
}

/** Windows as fresh tasks, passing the caller's span for the next window through to the plan. */
function* tasksOf(windows: Generator<Window, void, number | undefined>): Generator<WindowTask, void, number | undefined> {
  let next = windows.next();
  while (next.done !== true) {
    const units = yield { window: next.value, cursor: null, last: null };
    next = windows.next(units);
  }
}
