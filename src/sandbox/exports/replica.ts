// The replica export reads are answered from when SandboxOptions.replicaLagMs > 0: it applies
// each write of the accounts processing `lagMs` after the primary did, in the same order, so a
// pipeline that pushes and at once reads learns to wait (and to re-read behind its high-water
// mark, since a late row keeps the timestamp the primary gave it).
import { performance } from 'node:perf_hooks';

export class ReplicaLag {
  readonly #lagMs: number;
  readonly #pending: { readonly due: number; readonly apply: () => void }[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Off until the sandbox serves, and while a seeded portfolio is written: the replica holds
   * the seeded data from the start. */
  #lagging = false;
  #serving = false;

  constructor(lagMs: number) {
    this.#lagMs = lagMs;
  }

  /** From now on writes lag (called once the sandbox serves). */
  start(): void {
    this.#serving = true;
    this.#lagging = true;
  }

  /** Runs `writes` with every write applied at once (a seeded portfolio, whenever it is applied). */
  inStep(writes: () => void): void {
    this.#lagging = false;
    try {
      writes();
    } finally {
      this.#lagging = this.#serving;
    }
  }

  /** Runs `write` now without a lag, else `lagMs` from now, after every write given before it. */
  apply(write: () => void): void {
    if (this.#lagMs <= 0 || !this.#lagging) return write();
    this.#pending.push({ due: performance.now() + this.#lagMs, apply: write });
    this.#schedule();
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pending.length = 0;
    this.#head = 0;
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#head >= this.#pending.length) return;
    const wait = Math.max(0, this.#pending[this.#head]!.due - performance.now());
    this.#timer = setTimeout(() => this.#flush(), wait);
    // Pending replica writes alone do not keep a process alive.
    this.#timer.unref();
  }

  #flush(): void {
    this.#timer = undefined;
    const now = performance.now();
    while (this.#head < this.#pending.length && this.#pending[this.#head]!.due <= now) {
      const { apply } = this.#pending[this.#head]!;
      this.#head += 1;
      try {
        apply();
      } catch (error) {
        process.emitWarning(`sandbox: a replica write failed: ${String(error)}`);
      }
    }
    if (this.#head === this.#pending.length) {
      this.#pending.length = 0;
      this.#head = 0;
    }
    this.#schedule();
  }
}
