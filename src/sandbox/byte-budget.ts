// The request-body bytes all requests together may hold at once. A body is admitted by reserving
// its declared length up front (or its chunks as they come when no length is declared), and the
// reservation lasts until its request is answered, covering the parsed value built from it.

export class Reservation {
  #bytes: number;
  #released = false;
  readonly #budget: ByteBudget;

  /** @internal made by ByteBudget.reserve */
  constructor(budget: ByteBudget, bytes: number) {
    this.#budget = budget;
    this.#bytes = bytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Takes `more` bytes too; false, taking nothing, when the budget cannot spare them. */
  grow(more: number): boolean {
    if (this.#released || !this.#budget.take(more)) return false;
    this.#bytes += more;
    return true;
  }

  /** Gives the bytes back; later calls do nothing. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#budget.give(this.#bytes);
  }
}

export class ByteBudget {
  readonly capacity: number;
  #used = 0;
  #peak = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get used(): number {
    return this.#used;
  }

  /** Most bytes held at once since start. */
  get peak(): number {
    return this.#peak;
  }

  /** A reservation of `bytes`, or undefined when they do not fit beside what is held now. */
  reserve(bytes: number): Reservation | undefined {
    return this.take(bytes) ? new Reservation(this, bytes) : undefined;
  }

  /** @internal for Reservation */
  take(bytes: number): boolean {
    if (bytes < 0 || this.#used + bytes > this.capacity) return false;
    this.#used += bytes;
    if (this.#used > this.#peak) this.#peak = this.#used;
    return true;
  }

  /** @internal for Reservation */
  give(bytes: number): void {
    this.#used -= bytes;
  }
}
