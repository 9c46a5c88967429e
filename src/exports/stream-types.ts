// What an export stream hands out: its pages, the payloads of its events, and its counts.
import type { ExportRow, PageMeta, Pagination } from '../core/types.ts';
import type { Checkpoint } from './checkpointer.ts';
import type { Window } from './windows.ts';

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

export interface WindowEvent {
  dataset: string;
  phase: 'start' | 'end';
  window: Window;
  /** 0-based index among the windows of this run. */
  index: number;
}

export interface PageEvent {
  dataset: string;
  window: Window;
  rows: number;
  nextCursor: string | null;
}

export interface ExportStats {
  rows: number;
  pages: number;
  windows: number;
  splits: number;
  retries: number;
}
