// PLACEHOLDER: being written in this session (DuckDB sink).
import type { Sink, SinkNotice } from './sink.ts';

export interface DuckDbSinkOptions {
  /** The database file (created when missing). */
  path: string;
  onNotice?: (notice: SinkNotice) => void;
}

export function duckdbSink(_opts: DuckDbSinkOptions): Sink {
  throw new Error('not built yet');
}
