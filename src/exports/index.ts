// Export streams: windows, checkpoints, state stores.
export {
  exportPages, exportRows, ExportStream,
  type Checkpoint, type ExportOptions, type ExportPage, type ExportStats, type PageEvent, type WindowEvent,
} from './export-stream.ts';
export { fileState, memoryState, type DatasetState, type FileStateStore, type LoadPosition, type LoadRecord, type StateStore } from './state.ts';
export type { LoadProgress } from './progress.ts';
export { StateLockedError, acquireStateLock, lockPathOf, type StateLock } from './state-lock.ts';
export type { LockHolder } from './lock-holder.ts';
export { SyncError, WindowTimeoutError } from './errors.ts';
export { toNdjson } from './ndjson.ts';
export { DEFAULT_MIN_SPLIT_MS, DEFAULT_ORIGIN, planWindows, splitWindow, resolveWindowing, type Window, type WindowOption, type Windowing } from './windows.ts';
export type { SplitEvent, TotalEvent } from './walk.ts';
export type { RowIdentity, ValueMark } from './highwater.ts';
