// Deciding what a load reads (pure): a fresh initial load, an incremental load from the stored
// high-water mark, or the rest of an unfinished load; and the windows that are left to read.
import { parseDuration, type DurationValue } from '../core/options.ts';
import type { ValueMark } from './highwater.ts';
import { remainingTasks, type WindowTask } from './progress.ts';
import type { DatasetState, LoadRecord } from './state.ts';
import { normalizeInstant, toMillis, isoOf, type Windowing } from './windows.ts';

export type { WindowTask } from './progress.ts';

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
  const base = { end, until, origin: req.origin, windowing: req.windowing, sort: req.sort, position: null, progress: { done: [], open: [] } };
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

/**
 * The windows left in a load, in delivery order (see progress.ts remainingTasks). The value
 * passed to next() is the span in units of the window after the one just taken.
 */
export function remainingWindows(load: LoadRecord): Generator<WindowTask, void, number | undefined> {
  return remainingTasks(load);
}

/** The floor of the lookback memory for a high-water value. */
export function seenFloor(highWater: string, lookbackMs: number): string {
  return isoOf(toMillis(highWater) - lookbackMs);
}
