// What sync() asks of a store of rows: the state committed with the rows, and a commit that
// stores a page's rows and the state after them in one atomic step. Everything sync() promises
// (a crash at any instant loses nothing and duplicates nothing) rests on that one step.
import type { ExportRow } from '../core/types.ts';
import type { RowIdentity } from '../exports/highwater.ts';
import type { DatasetState } from '../exports/state.ts';
import type { LeaseBoard } from './shared-load.ts';

/** The dataset a sink is loading: its code, where its state is kept, how its rows are told apart. */
export interface SinkDataset {
  /** The dataset code, e.g. 'D07'. */
  code: string;
  section: string;
  /** The key its state is kept under (the code). */
  key: string;
  /** The field the rows are ordered by ('updated_at', 'created_at', ...): its newest value wins. */
  cursorField: string;
  /** 'key': rows are one per public_id; 'content': public_id is not unique (D16), the whole row
   * is its identity. */
  identity: RowIdentity;
}

/** What one commit stores: the rows of one or more pages, in order (possibly none), and the state
 * after the last of them. */
export interface SinkPage {
  dataset: SinkDataset;
  rows: readonly ExportRow[];
  /** The load's state once these rows are stored: what a re-run resumes from. */
  state: DatasetState;
}

/** Something the sink did that the user should hear of once: a column added, a type changed, a
 * field given no column (its name clashes with a column's in the store, or is too long for it). */
export interface SinkNotice {
  dataset: string;
  kind: 'column-added' | 'type-changed' | 'table-created' | 'no-column';
  message: string;
}

/**
 * A store sync() loads datasets into. For each dataset: `open` returns the state committed last
 * (the load resumes from it) and undoes anything written after it; then `commit` is called in order
 * with the rows of one page or of several that waited together, and once more with no rows and the
 * completed state. A commit stores the rows and the state together or not at all: that is what
 * makes a sync exactly once.
 *
 * A sink of your own in 20 lines, and what each of ours guarantees: docs/sinks.md.
 */
export interface Sink {
  /** Where the rows go, for messages: a folder, a database file, a database without its password. */
  readonly target: string;
  /**
   * Optional: an exclusive hold on the sink for one run. sync() takes it before the first dataset
   * and releases it at the end; a second run is refused (the sink's error says who holds it) and
   * writes nothing.
   */
  lock?(): Promise<{ release(): Promise<void> }>;
  /** Starts the load of a dataset: the state committed last (undefined: never loaded). Anything
   * written after that state (an NDJSON file's tail after a crash) is removed here. */
  open(dataset: SinkDataset): Promise<DatasetState | undefined>;
  /** Stores the rows and the state together, atomically. Rows replace those of the same identity
   * (a sink that only appends, like NDJSON, says so). */
  commit(page: SinkPage): Promise<void>;
  /** Where the dataset's rows are, for the summary: a file path or a table name. */
  location(dataset: SinkDataset): string;
  /** Releases files and connections. */
  close(): Promise<void>;
  /**
   * Optional, for a sink several processes fill at once (PostgreSQL): its lease board. sync()
   * then loads each dataset in parts claimed through it instead of calling open and commit.
   */
  leases?(): Promise<LeaseBoard>;
}
