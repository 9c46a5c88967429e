// Reads several async iterators at once and hands their items on strictly in task order: up to
// `concurrency` tasks open, each read at most `prefetch` items ahead of the consumer, the head
// also on demand. Knows nothing of windows or pages.

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

export interface OrderedReaderOptions<T> {
  /** The task after `previous`, or null when there are no more; asked each time a slot is free. */
  nextTask(previous: Previous<T> | undefined): T | null;
  /** Tasks open at once, at least 1. */
  concurrency: number;
  /** Items read ahead of the consumer per open task (the head also reads on demand). */
  prefetch: number;
  /** Aborting closes every open iterator and fails a waiting read with the signal's reason. */
  signal?: AbortSignal;
}

interface Slot<T, I> {
  readonly task: T;
  readonly items: AsyncIterator<I>;
  readonly buffer: I[];
  state: SlotState;
  error?: unknown;
}

interface Waiter<T, I> {
  resolve(result: IteratorResult<ReadEvent<T, I>>): void;
  reject(error: unknown): void;
}

export class OrderedReader<T extends ReadTask<I>, I> implements AsyncIterableIterator<ReadEvent<T, I>> {
  readonly #opts: OrderedReaderOptions<T>;
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
  readonly #onAbort = (): void => this.#close({ error: this.#opts.signal?.reason });

  constructor(opts: OrderedReaderOptions<T>) {
    this.#opts = opts;
    if (opts.signal?.aborted) this.#closed = true;
    else opts.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ReadEvent<T, I>>> {
    if (this.#answering) return Promise.reject(new Error('OrderedReader: one next() at a time.'));
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
    const head = this.#slots[0];
    if (head === undefined) {
      this.#waiter = null;
      this.#close(this.#planError ?? null, waiter);
      return;
    }
    if (head.buffer.length > 0) {
      this.#waiter = null;
      void this.#handOver(head, head.buffer.shift()!, waiter);
    } else if (head.state === 'failed') {
      this.#waiter = null;
      this.#close({ error: head.error }, waiter);
    } else if (head.state === 'ended') {
      this.#waiter = null;
      this.#slots.shift();
      this.#fill();
      waiter.resolve({ done: false, value: { task: head.task, end: true } });
    }
    // Otherwise the head's read is in flight; its settling steps again.
  }

  async #handOver(head: Slot<T, I>, item: I, waiter: Waiter<T, I>): Promise<void> {
    const idle = head.state === 'ready';
    this.#fill();
    if (idle && head.state === 'reading') {
      // Room was made: ask for the next page before handing this one over, and let that
      // request go out (it is sent from microtasks) before the consumer's synchronous work
      // on this page's rows. Its wait for the service then overlaps that work instead of
      // following it; the pages held ahead are the same as before (prefetch).
      await yieldToLoop();
      if (this.#closed) {
        this.#ended().then(waiter.resolve, waiter.reject);
        return;
      }
    }
    waiter.resolve({ done: false, value: { task: head.task, item } });
  }

  #fill(): void {
    while (this.#slots.length < this.#opts.concurrency && !this.#planned) {
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
    this.#slots.forEach((slot, i) => this.#read(slot, i === 0));
  }

  #read(slot: Slot<T, I>, isHead: boolean): void {
    if (slot.state !== 'ready') return;
    const wanted = slot.buffer.length < this.#opts.prefetch || (isHead && this.#waiter !== null && slot.buffer.length === 0);
    if (!wanted) return;
    slot.state = 'reading';
    slot.items.next().then(
      (result) => {
        if (this.#closed) return;
        if (result.done === true) {
          slot.state = 'ended';
        } else {
          slot.buffer.push(result.value);
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

/** Resolves after the microtasks queued so far, and the I/O they start, have run. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
