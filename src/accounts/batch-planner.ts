// Which record goes in which batch, and when a batch may be sent. Pure bookkeeping, no I/O: the
// writer feeds it records and tells it when a batch has settled.
//
// Order rule. Records with the same key (for accounts: debtorCompanyId, accountId, subAccountId)
// must reach the service in write order although several batches are in flight. So a key lives in
// at most one sealed batch (waiting to be sent, or in flight) at a time. A record whose key is held
// by a sealed batch, or by an earlier record still waiting, is parked; when the holding batch
// settles, parked records move, in write order, into the open batch. Records with the same key may
// share the open batch: the service applies a request's records in array order.
import { ConfigError } from '../core/errors.ts';

export interface PlannedEntry {
  readonly key: string;
  /** JSON size of the record, for maxBatchBytes. */
  readonly bytes: number;
}

export interface Batch<E extends PlannedEntry> {
  readonly id: number;
  readonly entries: E[];
  bytes: number;
  readonly keys: Set<string>;
}

export interface PlannerLimits {
  /** Records per batch. */
  batchSize: number;
  /** JSON bytes per batch; a single larger record still goes, alone. */
  maxBatchBytes: number;
}

export class BatchPlanner<E extends PlannedEntry> {
  readonly #limits: PlannerLimits;
  #open: Batch<E> | undefined;
  readonly #ready: Batch<E>[] = [];
  readonly #inFlight = new Set<Batch<E>>();
  /** key -> the sealed batch holding it. */
  readonly #held = new Map<string, Batch<E>>();
  #parked: E[] = [];
  /** key -> number of parked records with it. */
  readonly #parkedKeys = new Map<string, number>();
  #nextId = 1;
  #sealedCount = 0;
  #inFlightRecords = 0;
  #readyRecords = 0;

  constructor(limits: PlannerLimits) {
    if (!(limits.batchSize >= 1)) throw new ConfigError('batchSize must be at least 1');
    if (!(limits.maxBatchBytes >= 1)) throw new ConfigError('maxBatchBytes must be at least 1');
    this.#limits = limits;
  }

  /** Records held anywhere: open, ready, in flight or parked. */
  get buffered(): number {
    return (this.#open?.entries.length ?? 0) + this.#readyRecords + this.#inFlightRecords + this.#parked.length;
  }
  get openCount(): number {
    return this.#open?.entries.length ?? 0;
  }
  /** The id of the open batch while it has records. */
  get openId(): number | undefined {
    return this.openCount > 0 ? this.#open!.id : undefined;
  }
  get readyCount(): number {
    return this.#ready.length;
  }
  get parkedCount(): number {
    return this.#parked.length;
  }
  /** Batches sealed so far. */
  get sealedCount(): number {
    return this.#sealedCount;
  }
  /** Nothing left anywhere. */
  get idle(): boolean {
    return this.buffered === 0;
  }

  /** Takes a record in write order. */
  add(entry: E): void {
    if (this.#mustPark(entry.key)) {
      this.#park(entry);
      return;
    }
    this.#place(entry);
  }

  /** Seals the open batch, if it has anything, so it can be sent. */
  seal(): void {
    const open = this.#open;
    if (open === undefined || open.entries.length === 0) return;
    this.#open = undefined;
    for (const key of open.keys) this.#held.set(key, open);
    this.#ready.push(open);
    this.#readyRecords += open.entries.length;
    this.#sealedCount += 1;
  }

  /** The next sealed batch to send, now counted as in flight. */
  take(): Batch<E> | undefined {
    const batch = this.#ready.shift();
    if (batch === undefined) return undefined;
    this.#readyRecords -= batch.entries.length;
    this.#inFlight.add(batch);
    this.#inFlightRecords += batch.entries.length;
    return batch;
  }

  /** The batch has settled (every record accepted or rejected): its keys are free again, and
   * parked records that were waiting for them move into the open batch. */
  settle(batch: Batch<E>): void {
    if (!this.#inFlight.delete(batch)) throw new Error(`batch ${batch.id} is not in flight`);
    this.#inFlightRecords -= batch.entries.length;
    for (const key of batch.keys) {
      if (this.#held.get(key) === batch) this.#held.delete(key);
    }
    this.#promoteParked();
  }

  /** Every record not yet sent (open, sealed and waiting, parked); the planner holds none of them
   * after. For a writer that stops: the batches in flight are the writer's to account for. */
  takeUnsent(): E[] {
    const unsent = [...(this.#open?.entries ?? []), ...this.#ready.flatMap((batch) => batch.entries), ...this.#parked];
    for (const batch of this.#ready) {
      for (const key of batch.keys) this.#held.delete(key);
    }
    this.#open = undefined;
    this.#ready.length = 0;
    this.#readyRecords = 0;
    this.#parked = [];
    this.#parkedKeys.clear();
    return unsent;
  }

  #mustPark(key: string): boolean {
    return this.#held.has(key) || this.#parkedKeys.has(key);
  }

  #park(entry: E): void {
    this.#parked.push(entry);
    this.#parkedKeys.set(entry.key, (this.#parkedKeys.get(entry.key) ?? 0) + 1);
  }

  #place(entry: E): void {
    const open = this.#open;
    if (open !== undefined && open.entries.length > 0 && open.bytes + entry.bytes > this.#limits.maxBatchBytes) {
      this.seal();
      // Sealing may have taken this record's key with it; then it waits like any other.
      if (this.#held.has(entry.key)) {
        this.#park(entry);
        return;
      }
    }
    const target = this.#open ?? (this.#open = { id: this.#nextId++, entries: [], bytes: 0, keys: new Set() });
    target.entries.push(entry);
    target.bytes += entry.bytes;
    target.keys.add(entry.key);
    if (target.entries.length >= this.#limits.batchSize || target.bytes >= this.#limits.maxBatchBytes) this.seal();
  }

  #promoteParked(): void {
    if (this.#parked.length === 0) return;
    const parked = this.#parked;
    this.#parked = [];
    this.#parkedKeys.clear();
    for (const entry of parked) {
      // A key still held, or already parked again in this pass, keeps later records behind it.
      if (this.#mustPark(entry.key)) this.#park(entry);
      else this.#place(entry);
    }
  }
}
