// A full garbage collection of the JS heap, on demand. For a process whose heap is small and
// mostly garbage at known moments (a sync between two pages), collecting then keeps the heap's
// peak down where something else is about to need memory (DuckDB's checkpoint). Node exposes
// `gc` only with --expose-gc: without it, the flag is set for as long as it takes to create one
// context that has `gc`, then unset, so no other context (a REPL's, a notebook's) gets one.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/** Collects the whole heap now: a pause in proportion to its live objects. */
export function collectGarbage(): void {
  gc ??= exposedGc();
  gc();
}

function exposedGc(): () => void {
  const own = (globalThis as { gc?: () => void }).gc;
  if (typeof own === 'function') return own;
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
