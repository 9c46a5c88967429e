// Saving a stream's checkpoints to a StateStore only once the consumer has taken the page's rows
// out of the stream: a state saved earlier would let a crash skip rows still in the buffer.
// Saves run one at a time, and the states taken while one runs are coalesced: the next save
// writes the newest of them. A save per page queued behind a slow store (an fsync each) would let
// the saved state fall further and further behind the rows delivered.
import type { Readable } from 'node:stream';
import type { DatasetState, StateStore } from './state.ts';

export class SaveQueue {
  readonly #store: StateStore;
  readonly #key: string;
  readonly #onError: (error: Error) => void;
  /** States waiting for the consumer: each is saved once `through` items were taken. */
  #pending: { through: number; state: DatasetState }[] = [];
  // Saves run one after another, so an older state never lands after a newer one.
  #saving: Promise<void> = Promise.resolve();
  /** The newest state to save once the running save is done; undefined when none waits. */
  #next: DatasetState | undefined;
  /** The completed state's save, once the stream ended (completeAtEnd). */
  #atEnd: Promise<void> = Promise.resolve();

  constructor(store: StateStore, key: string, onError: (error: Error) => void) {
    this.#store = store;
    this.#key = key;
    this.#onError = onError;
  }

  /** The state after the page whose last item is the `through`-th pushed. */
  add(through: number, state: DatasetState): void {
    this.#pending.push({ through, state });
  }

  /** Saves the newest state whose items were all taken (`taken`: pushed less still buffered). */
  flush(taken: number): void {
    let latest: DatasetState | undefined;
    while (this.#pending.length > 0 && this.#pending[0]!.through <= taken) latest = this.#pending.shift()!.state;
    if (latest === undefined) return;
    const queued = this.#next !== undefined;
    this.#next = latest;
    if (queued) return;
    this.#saving = this.#saving.then(() => {
      const state = this.#next;
      this.#next = undefined;
      return state === undefined ? undefined : this.#store.save(this.#key, state);
    });
    this.#saving.catch(this.#onError);
  }

  /** Nothing is buffered: saves the completed state after the running save, and waits for it. */
  async complete(state: DatasetState): Promise<void> {
    this.#pending = [];
    this.#next = undefined;
    this.#saving = this.#saving.then(() => this.#store.save(this.#key, state));
    await this.#saving;
  }

  /**
   * Rows of the last page are still in this stream's buffer (a for-await loop takes them one
   * by one): the load is complete only once the consumer has had them all, which 'end'
   * tells. A consumer that stops first leaves the last page's checkpoint, so the next run
   * resumes there instead of starting after rows it never took. The save follows those
   * running, so that none of them lands after it; a for-await loop waits for it (settled),
   * and learns of its failure there, as no 'error' can follow 'end'.
   */
  completeAtEnd(state: DatasetState, stream: Readable): void {
    this.#pending = [];
    this.#next = undefined;
    stream.once('end', () => {
      this.#atEnd = this.#saving.then(() => this.#store.save(this.#key, state));
      // A pipe does not wait for it: a failure then only means the next run resumes at the last page.
      this.#atEnd.catch(() => undefined);
    });
  }

  /** Resolves once every save asked for so far is written; rejects with a save's failure. */
  async settled(): Promise<void> {
    await this.#saving;
    await this.#atEnd;
  }
}
