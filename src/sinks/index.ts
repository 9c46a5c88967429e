// Sinks: where sync() commits each page's rows together with its state.
export { sync, availableDatasets, type DatasetSyncSummary, type SyncOptions } from './sync.ts';
export { ndjsonSink, DEFAULT_STATE_FILE, type NdjsonSinkOptions } from './ndjson-sink.ts';
export { duckdbSink, DuckDbLockedError, type DuckDbSink, type DuckDbSinkOptions } from './duckdb-sink.ts';
export { postgresSink, type PostgresSinkOptions } from './postgres-sink.ts';
export { SinkError } from './errors.ts';
export type { Sink, SinkDataset, SinkNotice, SinkPage } from './sink.ts';
