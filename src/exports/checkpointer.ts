// A load's bookkeeping: the high-water mark, which windows are done and where the ones being
// read stand, and the lookback memory; and the state each delivered page moves it to. It saves nothing: the stream saves a page's state
// once the consumer has taken the page (save-queue.ts); a sink may commit it with the rows.
import {
  HighWaterTracker, boundaryFilter, pruneSeen, recordSeen, seenFilter, type DeliveredFilter, type RowKey, type ValueMark,
} from './highwater.ts';
import { seenFloor } from './load-plan.ts';
import { donePart, progressOf, withDone, type LoadProgress } from './progress.ts';
import type { DatasetState, LoadPosition, LoadRecord } from './state.ts';
import type { WalkedPage } from './walk.ts';
import { describeWindow, type Window } from './windows.ts';

/** Where a load stands after one delivered page (`page.checkpoint`, the 'checkpoint' event); saving
 * its `state` lets a re-run resume after that page. */
export interface Checkpoint {
  dataset: string;
  window: Window;
  /** The page's nextCursor; null when the window is done. */
  cursor: string | null;
  highWater: ValueMark | null;
  /** The complete state to save for this position. */
  state: DatasetState;
}

/**
 * What the export stream asks of a load's bookkeeping, page by page in delivery order. The stream
 * uses LoadCheckpointer; the interface is the seam where a sink that commits rows and state in
 * one transaction will plug in (not an option of the stream yet).
 */
export interface Checkpointer {
  /** Drop rows that earlier loads delivered: the inclusive since's boundary, the lookback memory. */
  readonly filters: readonly (DeliveredFilter | null)[];
  /** The load's progress as it started (the windows a resume still has to read follow from it). */
  readonly progress: LoadProgress;
  /** A span found to hold no row before any window was read there (the probe for the data's start). */
  skipped(span: Window): void;
  /** Takes the page of the window `task` as delivered; its checkpoint's state is the one to keep
   * with its rows. */
  delivered(page: WalkedPage, task: Window): Checkpoint;
  /** The window `task` was delivered to its end. */
  ended(task: Window): void;
  /** The state once every page was delivered: no load in progress. */
  completed(): DatasetState;
}

export interface CheckpointerStart {
  /** The dataset code, for the checkpoints. */
  dataset: string;
  /** The key the state is kept under. */
  stateKey: string;
  /** The state the load started from (its high-water mark and lookback memory). */
  previous: DatasetState | undefined;
  /** The load being run (startLoad). */
  load: LoadRecord;
  rowKey: RowKey;
  /** Lookback span; 0 keeps no lookback memory. */
  lookbackMs: number;
}

/** The memory is pruned once it holds this many ids, and then at twice what is kept. */
const PRUNE_AT = 1000;

export class LoadCheckpointer implements Checkpointer {
  readonly filters: readonly (DeliveredFilter | null)[];
  readonly #dataset: string;
  readonly #stateKey: string;
  readonly #load: LoadRecord;
  readonly #hw: HighWaterTracker;
  readonly #rowKey: RowKey;
  readonly #lookbackMs: number;
  /** id -> cursor value of rows delivered inside the lookback span; null without a lookback. */
  #seen: Record<string, string> | null;
  #pruneAt = PRUNE_AT;
  readonly progress: LoadProgress;
  /** Spans done, merged: windows ended, and what earlier runs completed. */
  #done: Window[];
  /** Windows being read (by their text): the window and the position after its last page. */
  readonly #open = new Map<string, { window: Window; at: LoadPosition }>();

  constructor(start: CheckpointerStart) {
    this.#dataset = start.dataset;
    this.#stateKey = start.stateKey;
    this.#load = structuredClone(start.load);
    this.#rowKey = start.rowKey;
    this.#lookbackMs = start.lookbackMs;
    this.#hw = new HighWaterTracker(start.previous?.highWater ?? null, start.rowKey);
    this.#seen = start.lookbackMs > 0 ? { ...(start.previous?.seen ?? {}) } : null;
    this.progress = progressOf(this.#load);
    this.#done = this.progress.done;
    // A window an earlier run left part-way stays where it stood until a page of it is delivered.
    for (const at of this.progress.open) this.#open.set(describeWindow(at.window), { window: at.window, at });
    this.#load.position = null;
    // The lookback memory is consulted only on incremental runs; the boundary set always.
    this.filters = [
      boundaryFilter(this.#load.skip, this.#rowKey),
      this.#load.kind === 'incremental' ? seenFilter(this.#seen, this.#rowKey) : null,
    ];
  }

  skipped(span: Window): void {
    this.#done = withDone(this.#done, span);
  }

  ended(task: Window): void {
    this.#open.delete(describeWindow(task));
    this.#done = withDone(this.#done, task);
  }

  delivered(page: WalkedPage, task: Window): Checkpoint {
    const field = page.cursorField;
    this.#hw.observe(page.rows, field);
    const highWater = this.#hw.snapshot();
    if (this.#seen !== null && highWater !== null) {
      const floor = seenFloor(highWater.value, this.#lookbackMs);
      recordSeen(this.#seen, page.rows, field, floor, this.#rowKey);
      if (Object.keys(this.#seen).length > this.#pruneAt) {
        this.#seen = pruneSeen(this.#seen, floor);
        this.#pruneAt = Math.max(PRUNE_AT, 2 * Object.keys(this.#seen).length);
      }
    }
    const cursor = page.body.pagination.nextCursor;
    this.#open.set(describeWindow(task), { window: task, at: { window: page.window, cursor, last: page.last } });
    this.#load.progress = this.#snapshot();
    const state: DatasetState = {
      version: 2,
      dataset: this.#stateKey,
      highWater,
      load: structuredClone(this.#load),
      ...(this.#seen !== null && { seen: { ...this.#seen } }),
    };
    return { dataset: this.#dataset, window: page.window, cursor, highWater, state };
  }

  /** Done: the spans ended plus the part of each open window before its position; open: the
   * windows with a cursor to go on from. */
  #snapshot(): LoadProgress {
    const parts: Window[] = [];
    const open: LoadPosition[] = [];
    for (const { window, at } of this.#open.values()) {
      const part = donePart(window, at, this.#load.sort);
      if (part !== null) parts.push(part);
      if (at.cursor !== null) open.push(structuredClone(at));
    }
    return { done: withDone(this.#done, ...parts), open };
  }

  completed(): DatasetState {
    const highWater = this.#hw.snapshot();
    let seen = this.#seen;
    if (seen !== null && highWater !== null) seen = pruneSeen(seen, seenFloor(highWater.value, this.#lookbackMs));
    return {
      version: 2,
      dataset: this.#stateKey,
      highWater,
      load: null,
      completedAt: new Date().toISOString(),
      ...(seen !== null && { seen }),
    };
  }
}
