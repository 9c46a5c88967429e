// What an export stream hands out: its pages, the payloads of its events, and its counts.
import type { ExportRow, PageMeta, Pagination } from '../core/types.ts';
import type { Checkpoint } from './checkpointer.ts';
import type { Window } from './windows.ts';

/** One page as `exportPages` delivers it: its rows, the service's pagination and meta, the window
 * it was read in, and the checkpoint to save once the rows are stored. */
export interface ExportPage {
  dataset: string;
  section: string;
  window: Window;
  /** Rows of the page, less rows an earlier read already delivered (inclusive-since boundary). */
  rows: ExportRow[];
  pagination: Pagination;
  meta: PageMeta;
  checkpoint: Checkpoint;
}

/** Payload of the stream's 'window' event: the reading of a window starts or ends, in delivery order. */
export interface WindowEvent {
  dataset: string;
  phase: 'start' | 'end';
  window: Window;
  /** 0-based index among the windows of this run. */
  index: number;
}

/** Payload of the stream's 'page' event, one per page delivered: its row count and the cursor of
 * the next page (null when the window is done). */
export interface PageEvent {
  dataset: string;
  window: Window;
  rows: number;
  nextCursor: string | null;
}

/** What an export stream has done so far (`stream.stats`); sync() reports it per dataset. */
export interface ExportStats {
  rows: number;
  pages: number;
  /** Windows this stream read to their end: one it stopped in is not counted. */
  windows: number;
  splits: number;
  retries: number;
}
