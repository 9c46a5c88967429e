// The session's calls on one DuckDB file take turns. A call the REPL stopped (Ctrl-C) is left
// to settle while the next line runs: its sink may still be stopping its query or closing the
// file, and the next sql() or sync() on that file would be refused as "already open in this
// process". So each call on a file waits for the one before it to settle, then opens the file.
const turns = new Map<string, Promise<unknown>>();

/** Runs `work` once the session's earlier calls on `path` (an absolute path) have settled. */
export async function inTurn<T>(path: string, work: () => Promise<T>): Promise<T> {
  const before = turns.get(path);
  const mine = (async () => {
    await before;
    return work();
  })();
  const settled = mine.catch(() => undefined);
  turns.set(path, settled);
  try {
    return await mine;
  } finally {
    if (turns.get(path) === settled) turns.delete(path);
  }
}
