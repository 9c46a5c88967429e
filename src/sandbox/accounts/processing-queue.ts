// The background queue behind "accepted now, processed in the background" (the accounts endpoint).
// One FIFO for every tenant and both endpoints, so records are applied exactly in arrival order
// (a flag queued after a create sees the account). Work runs in setImmediate slices of a bounded
// number of records, so requests keep being served while a large backlog is applied.

export interface ProcessingQueueOptions<T> {
  /** Applies one record; an exception is reported to onError and processing continues. */
  readonly apply: (item: T) => void;
  readonly onError: (error: unknown, item: T) => void;
  /** Records applied per event-loop turn. */
  readonly sliceSize?: number;
}

export class ProcessingQueue<T> {
  readonly #apply: (item: T) => void;
  readonly #onError: (error: unknown, item: T) => void;
  readonly #sliceSize: number;
  #items: T[] = [];
  #head = 0;
  #scheduled: NodeJS.Immediate | undefined;
  #waiters: (() => void)[] = [];
  #closed = false;

  constructor(options: ProcessingQueueOptions<T>) {
    this.#apply = options.apply;
    this.#onError = options.onError;
    this.#sliceSize = options.sliceSize ?? 2000;
  }

  /** Records accepted and not yet applied. */
  get depth(): number {
    return this.#items.length - this.#head;
  }

  enqueue(items: readonly T[]): void {
    if (this.#closed || items.length === 0) return;
    for (const item of items) this.#items.push(item);
    this.#schedule();
  }

  /** Resolves once everything queued so far, and anything queued meanwhile, is applied. */
  drain(): Promise<void> {
    if (this.depth === 0 || this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Stops processing and drops the backlog. Pending drains resolve rather than hang, since
   * nothing will ever empty the queue after this. */
  close(): void {
    this.#closed = true;
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    this.#items = [];
    this.#head = 0;
    this.#wake();
  }

  #schedule(): void {
    if (this.#scheduled || this.#closed) return;
    this.#scheduled = setImmediate(() => this.#runSlice());
  }

  #runSlice(): void {
    this.#scheduled = undefined;
    const end = Math.min(this.#items.length, this.#head + this.#sliceSize);
    while (this.#head < end) {
      const item = this.#items[this.#head] as T;
      // Cleared as it is taken, so applied records can be collected before the array compacts.
      this.#items[this.#head] = undefined as T;
      this.#head += 1;
      try {
        this.#apply(item);
      } catch (error) {
        this.#onError(error, item);
      }
    }
    this.#compact();
    if (this.depth > 0) this.#schedule();
    else this.#wake();
  }

  #compact(): void {
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 65536 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}
