// The windows of a load as tasks for the ordered reader: each window's span is planned from how
// the one before it ended (window growth), and each task opens that window's walk.
import type { Previous } from './parallel-reader.ts';
import type { WindowTask as PlannedWindow } from './progress.ts';
import type { LoadRecord } from './state.ts';
import { walkGrownWindow, walkWindow, type WalkContext, type WalkedPage } from './walk.ts';
import { nextSpanUnits, type Window } from './windows.ts';

export interface WindowTask {
  readonly window: Window;
  /** 0-based index among the windows of this run. */
  readonly index: number;
  /** Span of the window in units of the windowing, as planned (1 unless grown). */
  readonly units: number;
  /** Whether any page of the window had rows (before filters): decides the next window's span. */
  readonly sawRows: boolean;
  open(): AsyncIterator<WalkedPage>;
}

/**
 * The planner of a load's remaining windows (`tasks`, from progress.ts remainingTasks).
 * `cursorField()` is the field the walk of a new window starts with: the stream's, as its last
 * delivered page named it.
 */
export function windowTasks(
  load: LoadRecord, tasks: Generator<PlannedWindow, void, number | undefined>, walk: WalkContext, cursorField: () => string,
): (previous: Previous<WindowTask> | undefined) => WindowTask | null {
  let index = 0;
  return (previous) => {
    // The next window grows only when the one planned before it is known to be empty; with
    // several windows in flight that is often not known yet, and it stays one unit.
    const prev = previous?.task;
    const units = nextSpanUnits(
      load.windowing,
      prev !== undefined && previous!.state === 'ended' ? { units: prev.units, empty: !prev.sawRows } : null,
    );
    const next = tasks.next(units);
    if (next.done === true) return null;
    const { window, cursor, last } = next.value;
    // A window resumed part-way had rows before the crash; a fresh one planned wider than one
    // unit is probed first (walkGrownWindow).
    const grown = units > 1 && cursor === null && prev !== undefined;
    let sawRows = cursor !== null;
    return {
      window,
      index: index++,
      units: grown ? units : 1,
      get sawRows() {
        return sawRows;
      },
      open() {
        const field = cursorField();
        const pages = grown ? walkGrownWindow(walk, window, field) : walkWindow(walk, window, { cursor, delivered: last, cursorField: field });
        // The walk itself, watched, rather than an async generator looping over it: a suspended
        // generator keeps the page it yielded last reachable while the next one is fetched.
        return {
          next: () => pages.next().then((result) => {
            if (result.done !== true && result.value.body.rows.length > 0) sawRows = true;
            return result;
          }),
          return: (value?: unknown) => pages.return(value),
          throw: (error?: unknown) => pages.throw(error),
        };
      },
    };
  };
}
