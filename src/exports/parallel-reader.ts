// Reads several async iterators at once and hands their items on: strictly in task order
// (`ordered`), or each as soon as it is read. Up to `concurrency` tasks are read at once. Without
// a budget each holds up to `prefetch` items ahead of the consumer; with a budget of bytes the
// head holds `prefetch` and every task reads on while the items held stay under the budget, so
// tasks behind the head keep reading instead of stalling. The head
// (in order) or any task (out of order) is also read on demand. Knows nothing of windows or pages.
import { nextTurn } from '../core/next-turn.ts';

/** What a slot is doing: free to read more, a read in flight, finished, or failed. */
export type SlotState = 'ready' | 'reading' | 'ended' | 'failed';

export interface ReadTask<I> {
  open(): AsyncIterator<I>;
}

/** The task planned last and how far it got, for planning the one after it. */
export interface Previous<T> {
  readonly task: T;
  readonly state: SlotState;
}

/** An item of a task, or the end of a task (after its last item). */
export type ReadEvent<T, I> = { task: T; item: I; end?: undefined } | { task: T; end: true };

export interface ParallelReaderOptions<T, I> {
  /** The task after `previous`, or null when there are no more; asked each time a slot is free. */
  nextTask(previous: Previous<T> | undefined): T | null;
  /** Tasks open at once, at least 1. */
  concurrency: number;
  /** Items read ahead of the consumer per open task (the head also reads on demand). */
  prefetch: number;
  /** Hand items over in task order (default), or as soon as they are read. */
  ordered?: boolean;
  /**
   * Tasks read on while the items held add up to fewer bytes than this (default 0: `prefetch`
   * alone bounds the look-ahead, per task). With a budget only the head in order keeps
   * `prefetch` items regardless, and a task that was read to its end no longer counts against
   * `concurrency`: the next one opens while its items wait.
   */
  budgetBytes?: number;
  /** The size of an item in bytes, for the budget. */
  sizeOf?(item: I): number;
  /** Aborting closes every open iterator and fails a waiting read with the signal's reason. */
  signal?: AbortSignal;
}

interface Held<I> {
  readonly item: I;
  readonly size: number;
}

interface Slot<T, I> {
  readonly task: T;
  readonly items: AsyncIterator<I>;
  readonly buffer: Held<I>[];
  state: SlotState;
  error?: unknown;
}

interface Waiter<T, I> {
  resolve(result: IteratorResult<ReadEvent<T, I>>): void;
  reject(error: unknown): void;
}

export class ParallelReader<T extends ReadTask<I>, I> implements AsyncIterableIterator<ReadEvent<T, I>> {
  readonly #opts: ParallelReaderOptions<T, I>;
  readonly #slots: Slot<T, I>[] = [];
  // Kept after it leaves #slots: the next task is planned from it.
  #last: Slot<T, I> | undefined;
  #planned = false;
  #planError: { error: unknown } | undefined;
  // A consumer's next() not answered yet: the head reads on demand while it waits.
  #waiter: Waiter<T, I> | null = null;
  // Set from next() until its answer: one at a time keeps the items in order.
  #answering = false;
  #closed = false;
  /** Bytes of the items held, across the tasks. */
  #bytes = 0;
  /** Reads started so far: a hand-over that started one lets its request go out first. */
  #started = 0;
  readonly #onAbort = (): void => this.#close({ error: this.#opts.signal?.reason });

  constructor(opts: ParallelReaderOptions<T, I>) {
    this.#opts = opts;
    if (opts.signal?.aborted) this.#closed = true;
    else opts.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ReadEvent<T, I>>> {
    if (this.#answering) return Promise.reject(new Error('ParallelReader: one next() at a time.'));
    if (this.#closed) return this.#ended();
    this.#answering = true;
    return new Promise<IteratorResult<ReadEvent<T, I>>>((resolve, reject) => {
      this.#waiter = { resolve, reject };
      this.#step();
    }).finally(() => {
      this.#answering = false;
    });
  }

  /** Closes every open iterator (for await calls it on break); a waiting next() ends. */
  async return(): Promise<IteratorResult<ReadEvent<T, I>>> {
    this.#close(null);
    return { done: true, value: undefined };
  }

  /** Plans tasks into free slots, starts the reads wanted, and answers a waiting next(). */
  #step(): void {
    if (this.#closed) return;
    this.#fill();
    const waiter = this.#waiter;
    if (waiter === null) return;
    const slot = this.#opts.ordered === false ? this.#anyReady() : this.#slots[0];
    if (slot === undefined) {
      if (this.#slots.length > 0) return; // every read is in flight; its settling steps again
      this.#waiter = null;
      this.#close(this.#planError ?? null, waiter);
      return;
    }
    if (slot.buffer.length > 0) {
      this.#waiter = null;
      const held = slot.buffer.shift()!;
      this.#bytes -= held.size;
      void this.#handOver(slot, held.item, waiter);
    } else if (slot.state === 'failed') {
      this.#waiter = null;
      this.#close({ error: slot.error }, waiter);
    } else if (slot.state === 'ended') {
      this.#waiter = null;
      this.#slots.splice(this.#slots.indexOf(slot), 1);
      this.#fill();
      waiter.resolve({ done: false, value: { task: slot.task, end: true } });
    }
    // Otherwise the head's read is in flight; its settling steps again.
  }

  /** Out of order: a task read to its end first, then one with an item, then a failed one. */
  #anyReady(): Slot<T, I> | undefined {
    return this.#slots.find((s) => s.state === 'ended' && s.buffer.length === 0)
      ?? this.#slots.find((s) => s.buffer.length > 0)
      ?? this.#slots.find((s) => s.state === 'failed');
  }

  async #handOver(slot: Slot<T, I>, item: I, waiter: Waiter<T, I>): Promise<void> {
    const started = this.#started;
    this.#fill();
    if (this.#started !== started) {
      // Room was made: ask for the next page before handing this one over, and let that
      // request go out (it is sent from microtasks) before the consumer's synchronous work
      // on this page's rows. Its wait for the service then overlaps that work instead of
      // following it; the pages held ahead are the same as before.
      await nextTurn();
      if (this.#closed) {
        this.#ended().then(waiter.resolve, waiter.reject);
        return;
      }
    }
    waiter.resolve({ done: false, value: { task: slot.task, item } });
  }

  /** Whether a slot still takes one of the `concurrency` places: while it reads, or, without a
   * budget, until it was handed over to its end. */
  #holdsPlace(slot: Slot<T, I>): boolean {
    return (this.#opts.budgetBytes ?? 0) === 0 || slot.state === 'ready' || slot.state === 'reading';
  }

  #underBudget(): boolean {
    return this.#bytes < (this.#opts.budgetBytes ?? 0);
  }

  #fill(): void {
    const budgeted = (this.#opts.budgetBytes ?? 0) > 0;
    while (!this.#planned && this.#slots.filter((s) => this.#holdsPlace(s)).length < this.#opts.concurrency) {
      // With a budget, a new task opens only while there is room for what it will read.
      if (budgeted && this.#slots.length > 0 && !this.#underBudget()) break;
      let slot: Slot<T, I> | null = null;
      try {
        const task = this.#opts.nextTask(this.#last === undefined ? undefined : { task: this.#last.task, state: this.#last.state });
        if (task !== null) slot = { task, items: task.open(), buffer: [], state: 'ready' };
      } catch (error) {
        // Surfaces once the tasks planned before it are read, like a failed task would.
        this.#planError = { error };
      }
      if (slot === null) {
        this.#planned = true;
        break;
      }
      this.#slots.push(slot);
      this.#last = slot;
    }
    // Read on demand: the head in order; out of order, every task while nothing is held.
    const ordered = this.#opts.ordered !== false;
    const starving = this.#waiter !== null && (ordered ? this.#slots[0]?.buffer.length === 0 : this.#slots.every((s) => s.buffer.length === 0));
    this.#slots.forEach((slot, i) => this.#read(slot, starving && (!ordered || i === 0), ordered && i === 0));
  }

  /** Without a budget every task reads `prefetch` items ahead; with one, only the head in order
   * does, and everything else is read while the items held stay under the budget. */
  #read(slot: Slot<T, I>, onDemand: boolean, isHead: boolean): void {
    if (slot.state !== 'ready') return;
    const prefetched = (isHead || (this.#opts.budgetBytes ?? 0) === 0) && slot.buffer.length < this.#opts.prefetch;
    const wanted = onDemand || prefetched || this.#underBudget();
    if (!wanted) return;
    slot.state = 'reading';
    this.#started += 1;
    slot.items.next().then(
      (result) => {
        if (this.#closed) return;
        if (result.done === true) {
          slot.state = 'ended';
        } else {
          const size = (this.#opts.budgetBytes ?? 0) > 0 ? this.#opts.sizeOf?.(result.value) ?? 0 : 0;
          slot.buffer.push({ item: result.value, size });
          this.#bytes += size;
          slot.state = 'ready';
        }
        this.#step();
      },
      (error: unknown) => {
        if (this.#closed) return;
        slot.state = 'failed';
        slot.error = error;
        this.#step();
      },
    );
  }

  /** Ends the read: every iterator still open is returned; `failure` rejects the waiter. */
  #close(failure: { error: unknown } | null, waiter: Waiter<T, I> | null = this.#waiter): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#waiter = null;
    this.#opts.signal?.removeEventListener('abort', this.#onAbort);
    for (const slot of this.#slots) {
      // One in flight is returned once that read settles (an async generator queues it).
      if (slot.state === 'ready' || slot.state === 'reading') void slot.items.return?.(undefined)?.catch(() => undefined);
    }
    this.#slots.length = 0;
    if (failure !== null) waiter?.reject(failure.error);
    else waiter?.resolve({ done: true, value: undefined });
  }

  /** The answer once closed: done, or the abort's reason. */
  #ended(): Promise<IteratorResult<ReadEvent<T, I>>> {
    const signal = this.#opts.signal;
    return signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve({ done: true, value: undefined });
  }
}
