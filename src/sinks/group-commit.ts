// Committing pages in groups. A commit has a cost of its own whatever it holds (a round trip to the
// store, the state written, the store's log synced to disk), so a page waits a little for others
// to share its commit: until a few thousand rows are waiting, or for a few milliseconds at most
// (as a producer of Kafka waits for `batch.size` or `linger.ms`). While a commit runs the export
// goes on reading, and a sink slower than the export gets larger groups still, up to a bound that
// holds the export back (the group commit of databases). Each commit is rows and state together,
// so a crash at any instant loses nothing and stores nothing twice; it only re-reads the pages not
// yet committed.
import type { ExportRow } from '../core/types.ts';

/** Pages waiting for a commit, at most: the export waits once this many rows are waiting. At
 * 10,000 the pages waiting during a PostgreSQL merge (rows, and their COPY text) raised the peak
 * RSS of a 1,000,000-row sync by some 50 MB; 5,000 costs no measurable time, and less saves no
 * more memory (docs/benchmarks.md). */
export const MAX_GROUP_ROWS = 5_000;

/** Rows that start a commit at once. */
export const MIN_GROUP_ROWS = 3_000;

/** How long a page waits for others before it is committed with those that came meanwhile. Short
 * against a real service's round trip (pages a few tens of milliseconds apart are committed one by
 * one), long against a local sandbox's, which serves a page of 1,000 rows in a few milliseconds. */
export const GROUP_LINGER_MS = 25;

export interface GroupLimits {
  /** Rows that start a commit at once (MIN_GROUP_ROWS). */
  minRows?: number;
  /** Rows waiting that hold the export back (MAX_GROUP_ROWS). */
  maxRows?: number;
  /** Milliseconds the first page waiting waits for others (GROUP_LINGER_MS). */
  lingerMs?: number;
}

/**
 * Reads `pages` to the end and commits them in groups, in order: a group once `minRows` rows are
 * waiting, or `lingerMs` after its first page arrived, and the pages left when the reading ends.
 * A commit that fails stops the reading and rejects with its error. A read that fails waits for
 * the commit in flight, commits the pages read before it (each is consistent with its state), and
 * rejects with the read's error.
 */
export async function commitInGroups<P>(
  pages: AsyncIterable<P>,
  rowsOf: (page: P) => number,
  commit: (group: P[]) => Promise<void>,
  { minRows = MIN_GROUP_ROWS, maxRows = MAX_GROUP_ROWS, lingerMs = GROUP_LINGER_MS }: GroupLimits = {},
): Promise<void> {
  let pending: P[] = [];
  let pendingRows = 0;
  let running: Promise<void> | undefined;
  let failed: { error: unknown } | undefined;
  /** Runs while pages wait, and makes them `due` once they have waited lingerMs. */
  let linger: NodeJS.Timeout | undefined;
  let due = false;
  let reading = true;

  /** Commits the pages waiting while they are due or reach minRows, group after group. */
  const drain = async (): Promise<void> => {
    try {
      while (pending.length > 0 && failed === undefined && (due || pendingRows >= minRows)) {
        const group = pending;
        pending = [];
        pendingRows = 0;
        due = false;
        clearTimeout(linger);
        linger = undefined;
        await commit(group);
      }
    } catch (error) {
      failed = { error };
    }
  };
  const start = (): void => {
    if (running !== undefined) return;
    running = drain().finally(() => {
      running = undefined;
      wait();
    });
  };
  /** Starts the clock of the pages waiting, unless it runs already. */
  const wait = (): void => {
    if (!reading || linger !== undefined || pending.length === 0 || failed !== undefined) return;
    linger = setTimeout(() => {
      linger = undefined;
      due = true;
      // A commit in flight takes them when it ends (drain's loop).
      start();
    }, lingerMs);
  };

  let readFailure: { error: unknown } | undefined;
  try {
    for await (const page of pages) {
      if (failed !== undefined) break;
      pending.push(page);
      pendingRows += rowsOf(page);
      if (pendingRows >= minRows) start();
      else wait();
      // Backpressure: the export waits rather than piling pages up in memory.
      while (pendingRows >= maxRows && running !== undefined) await running;
    }
  } catch (error) {
    readFailure = { error };
  } finally {
    reading = false;
    clearTimeout(linger);
    // Whatever stopped the reading, the commit in flight ends before this returns: the caller may
    // release the sink right after.
    while (running !== undefined) await running;
  }
  if (failed !== undefined) throw failed.error;
  // Pages read after the last commit started are committed now, also when a read failed: each
  // is consistent with its state, and the next run need not read them again.
  if (pending.length > 0) await commit(pending.splice(0));
  if (readFailure !== undefined) throw readFailure.error;
}

/** The rows of a group of pages, in order (the page's own array when it is alone). */
export function rowsOf(group: readonly { rows: readonly ExportRow[] }[]): readonly ExportRow[] {
  return group.length === 1 ? group[0]!.rows : group.flatMap((page) => page.rows);
}
