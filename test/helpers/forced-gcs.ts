// How many forced full collections (gc(), collectGarbage()) happened while `use` ran, as Node
// reports them to a PerformanceObserver.
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

export async function countForcedGcs(use: () => Promise<void>): Promise<number> {
  let forced = 0;
  const count = (entries: readonly PerformanceEntry[]) => {
    for (const entry of entries) {
      const { kind, flags } = (entry as unknown as { detail: { kind: number; flags: number } }).detail;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR && (flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0) forced += 1;
    }
  };
  const observer = new PerformanceObserver((list) => count(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  try {
    await use();
    // Node makes the entry of a collection on a later turn of the event loop, and hands it to
    // observers on the turn after.
    for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    count(observer.takeRecords());
    return forced;
  } finally {
    observer.disconnect();
  }
}
