// Committing pages as fast as a sink takes them. While one commit runs, the export goes on reading,
// and the pages that arrive meanwhile go into the next commit together, with the state of the last
// of them: a sink slower than the export makes fewer, larger transactions instead of holding the
// export back page by page (the group commit of databases). A sink faster than the export still
// commits every page on its own. Each commit is still rows and state together, so a crash at any
// instant loses nothing and stores nothing twice; it only re-reads the pages not yet committed.
import type { ExportRow } from '../core/types.ts';

/** Pages waiting for a commit, at most: the export waits once this many rows are waiting. At
 * 10,000 the pages waiting during a PostgreSQL merge (rows, and their COPY text) raised the peak
 * RSS of a 1,000,000-row sync by some 50 MB; 5,000 costs no measurable time, and less saves no
 * more memory (docs/benchmarks.md). */
export const MAX_GROUP_ROWS = 5_000;

/**
 * Reads `pages` to the end and commits them in groups, in order. A commit that fails stops the
 * reading and rejects with its error; a read that fails waits for the commit in flight (its pages
 * are consistent with its state) and rejects with the read's error. Pages read but not committed
 * are dropped: their state was never stored, so the next run reads them again.
 */
export async function commitInGroups<P>(
  pages: AsyncIterable<P>,
  rowsOf: (page: P) => number,
  commit: (group: P[]) => Promise<void>,
  maxRows = MAX_GROUP_ROWS,
): Promise<void> {
  let pending: P[] = [];
  let pendingRows = 0;
  let running: Promise<void> | undefined;
  let failed: { error: unknown } | undefined;

  const drain = async (): Promise<void> => {
    try {
      while (pending.length > 0 && failed === undefined) {
        const group = pending;
        pending = [];
        pendingRows = 0;
        await commit(group);
      }
    } catch (error) {
      failed = { error };
    } finally {
      running = undefined;
    }
  };

  try {
    for await (const page of pages) {
      if (failed !== undefined) break;
      pending.push(page);
      pendingRows += rowsOf(page);
      if (running === undefined) running = drain();
      // Backpressure: the export waits rather than piling pages up in memory.
      while (pendingRows >= maxRows && running !== undefined) await running;
    }
  } finally {
    // Whatever stopped the reading, the commit in flight ends before this returns: the caller may
    // release the sink right after.
    while (running !== undefined) await running;
  }
  if (failed !== undefined) throw failed.error;
  // Pages read after the last commit started are committed now.
  if (pending.length > 0) await commit(pending.splice(0));
}

/** The rows of a group of pages, in order (the page's own array when it is alone). */
export function rowsOf(group: readonly { rows: readonly ExportRow[] }[]): readonly ExportRow[] {
  return group.length === 1 ? group[0]!.rows : group.flatMap((page) => page.rows);
}
