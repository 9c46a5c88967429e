// Deciding what a load reads (pure): a fresh initial load, an incremental load from the stored
// high-water mark, or the rest of an unfinished load; and the windows that are left to read.
import { parseDuration, type DurationValue } from '../core/options.ts';
import type { ValueMark } from './highwater.ts';
import type { DatasetState, LoadPosition, LoadRecord } from './state.ts';
import { normalizeInstant, planWindows, toMillis, isoOf, type Window, type Windowing } from './windows.ts';

export interface LoadRequest {
  since?: string;
  until?: string;
  origin: string;
  windowing: Windowing;
  sort: 'asc' | 'desc';
  /** Re-read this much before the high-water mark on incremental loads. */
  lookback?: DurationValue;
  /** The load's start time, which becomes its fixed end (ISO). */
  now: string;
}

export interface LoadStart {
  load: LoadRecord;
  mode: 'initial' | 'incremental' | 'resumed';
}

export function lookbackMillis(lookback: LoadRequest['lookback']): number {
  return lookback === undefined ? 0 : parseDuration(lookback, 'lookback');
}

/**
 * The state decides before the options: an unfinished load is resumed as it was started, and a
 * completed one is followed by an incremental load from its high-water mark (options `since`
 * only apply to the first load of a dataset).
 */
export function startLoad(previous: DatasetState | undefined, req: LoadRequest): LoadStart {
  if (previous?.load) return { load: previous.load, mode: 'resumed' };
  const until = req.until === undefined ? null : normalizeInstant(req.until, 'until');
  const end = until ?? normalizeInstant(req.now, 'now');
  const base = { end, until, origin: req.origin, windowing: req.windowing, sort: req.sort, position: null };
  const hw = previous?.highWater ?? null;
  if (hw !== null) {
    const back = lookbackMillis(req.lookback);
    const since = back > 0 ? isoOf(toMillis(hw.value, 'high-water value') - back) : hw.value;
    // With a lookback the dedupe is by the remembered (id, value) pairs instead (state.seen).
    const skip: ValueMark | null = back > 0 ? null : hw;
    return { load: { kind: 'incremental', since, skip, ...base }, mode: 'incremental' };
  }
  const since = req.since !== undefined ? normalizeInstant(req.since, 'since') : req.windowing.kind === 'none' ? null : req.origin;
  return { load: { kind: 'initial', since, skip: null, ...base }, mode: 'initial' };
}

/** One window still to read, possibly part-way through. */
export interface WindowTask {
  window: Window;
  cursor: string | null;
  last: ValueMark | null;
}

/**
 * The windows left in a load, in delivery order, starting from its position. The value passed to
 * next() is the span in units of the window after the one just taken (see planWindows); the
 * window a resumed load was part-way through, and the first one after it, are one unit.
 */
export function* remainingWindows(load: LoadRecord): Generator<WindowTask, void, number | undefined> {
  const pos: LoadPosition | null = load.position;
  const plan = (since: string | null, until: string | null): Generator<WindowTask, void, number | undefined> =>
    tasksOf(planWindows({ since, until, end: load.end, windowing: load.windowing, sort: load.sort }));
  if (pos === null) {
    yield* plan(load.since, load.until);
    return;
  }
  if (pos.cursor !== null) yield { window: pos.window, cursor: pos.cursor, last: pos.last };
  if (load.sort === 'asc') {
    // An open-topped window is always the last one.
    if (pos.window.until === null) return;
    if (load.until !== null && toMillis(pos.window.until) >= toMillis(load.until)) return;
    yield* plan(pos.window.until, load.until);
  } else {
    if (pos.window.since === null) return;
    if (load.since !== null && toMillis(pos.window.since) <= toMillis(load.since)) return;
    yield* plan(load.since, pos.window.since);
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

/** The floor of the lookback memory for a high-water value. */
export function seenFloor(highWater: string, lookbackMs: number): string {
  return isoOf(toMillis(highWater) - lookbackMs);
}
