// The record writer: an object-mode Writable that validates, batches and sends records to one of
// the account endpoints, and accounts for every record it was given (accepted or rejected, never
// dropped). One mechanism for accounts and status updates, parametrised by a RecordKind.
//
// Flow of a record: validate (refused -> 'reject') -> BatchPlanner (open batch, or parked behind an
// in-flight batch holding its key) -> sealed at batchSize / maxBatchBytes / flushInterval after its
// first record / end() -> sent, up to `concurrency` batches at a time -> accepted, or split after a 400
// (resend-plan.ts), or reported as failed once its delivery deadline has passed
// (delivery-deadline.ts; the client retries each request until then).
//
// Memory: the write callback is held back while `maxBuffered` records are held, so write()
// returns false and a fast source waits for the service.
//
// Stopping (the signal, destroy(), a failure): requests in flight are aborted, and every record the
// writer holds is rejected as `stopped`, those whose request was in flight saying the service may
// have applied them; the rejects file is then ended, not discarded, so it holds every reject.
import { Writable } from 'node:stream';
import type { AccountsRequestOptions, RefreshEvent, RetryEvent, RetryPolicy, ServiceApi } from '../core/api.ts';
import { AbortError, ConfigError, firstLineOf, LenderError, ValidationError } from '../core/errors.ts';
import type { OptionNames } from '../core/option-names.ts';
import { parseInteger } from '../core/options.ts';
import { describeAnomaly, type AnomalyEvent } from './anomaly.ts';
import { BatchPlanner, type Batch, type PlannedEntry } from './batch-planner.ts';
import { DeliveryDeadline, deliveryTimeoutOption } from './delivery-deadline.ts';
import type { RecordKind, Validator } from './record-kinds.ts';
import { RejectsSink } from './rejects-sink.ts';
import { planAfterValidationError } from './resend-plan.ts';
import { MalformedRecord, SourceRecord, type SourcePosition } from './source-record.ts';

/** Why a record was rejected: `invalid` failed client-side validation, `malformed` is not a record
 * at all, `server` was named in the service's 400, `failed` was in a batch still failing when its
 * delivery deadline (or its attempts) ran out, `stopped` was held by the writer when it stopped
 * (its signal, destroy(), a failure) before the service accepted it. */
export type RejectReason = 'invalid' | 'malformed' | 'server' | 'failed' | 'stopped';

/** A record the writer did not deliver, emitted as `reject` and written to the rejects file: where it came from, why, and the messages. */
export interface RejectEvent {
  /** 0-based position among the writes to this writer. */
  index: number;
  /** Position in the source, when the record came as a SourceRecord/MalformedRecord. */
  line?: number;
  element?: number;
  reason: RejectReason;
  errors: string[];
  /** What was written (for malformed input, the text read). */
  record: unknown;
}

/** A batch the writer finished sending, emitted as `batch`: its records, how many were accepted and rejected, requests and bytes. */
export interface BatchEvent {
  id: number;
  records: number;
  accepted: number;
  rejected: number;
  /** Requests this batch took: 1, more after a 400 split. Client retries are not counted here. */
  requests: number;
  bytes: number;
}

/** What became of every record written to a writer (`writer.summary`); once it has finished, `accepted + rejected === received`. */
export interface WriterSummary {
  received: number;
  accepted: number;
  rejected: number;
  rejectedByReason: Partial<Record<RejectReason, number>>;
  /** Batches sealed and sent. */
  batches: number;
  /** Requests the writer made (a 400 split adds some); client retries are in `retries`. */
  requests: number;
  /** Retries the client made of this writer's requests. */
  retries: number;
  /** JSON bytes of the request bodies the writer sent. */
  bytes: number;
}

/** The summary of a writer that has taken nothing yet. */
export function emptyWriterSummary(): WriterSummary {
  return { received: 0, accepted: 0, rejected: 0, rejectedByReason: {}, batches: 0, requests: 0, retries: 0, bytes: 0 };
}

/** How many records a writer holds right now and at most, for watching its memory and backpressure. */
export interface BufferState {
  /** Records held now: open batch, sealed, in flight, parked. */
  buffered: number;
  /** The most ever held at once; never above maxBuffered. */
  peakBuffered: number;
  maxBuffered: number;
  inFlight: number;
  parked: number;
}

/** The options every writer takes, for the check of the names given (option-names.ts). */
export const RECORD_WRITER_OPTION_NAMES: OptionNames<RecordWriterOptions> = {
  batchSize: true, maxBatchBytes: true, flushInterval: true, concurrency: true, maxBuffered: true, highWaterMark: true,
  rejects: true, deliveryTimeoutMs: true, retry: true, signal: true,
};

/** Options of the account and flag writers: batch size and bytes, concurrency, buffering, retries, delivery deadline and rejects file. */
export interface RecordWriterOptions {
  /** Records per request. Default 500. */
  batchSize?: number;
  /** JSON bytes per request. Default 4 MiB. */
  maxBatchBytes?: number;
  /** A partly filled batch is sent at most this many ms after its first record. Default 1000. */
  flushInterval?: number;
  /** Requests in flight at once. Default 2. */
  concurrency?: number;
  /** Records held before write() returns false. Default batchSize * (concurrency + 1). */
  maxBuffered?: number;
  /** Writable highWaterMark (records queued in front of the writer). Default 16. */
  highWaterMark?: number;
  /** Rejected records as NDJSON: a stream (left open) or a file path (created, closed at the end). */
  rejects?: Writable | NodeJS.WritableStream | string;
  /**
   * Time allowed to deliver each batch, from its first request, in ms. Until then a 5xx, 504 or
   * dropped connection is retried with the client's jittered backoff; then the batch's records
   * are rejected as `failed` with the last error. Default 120000 (2 min); Infinity never gives up.
   */
  deliveryTimeoutMs?: number;
  /**
   * Retry settings of this writer's requests, over the client's. The writer sets `attempts`
   * (unbounded: the deadline bounds them) and `maxElapsedMs` (what is left of the deadline); give
   * `attempts` here to also stop after that many attempts per request, as `--max-attempts` does.
   */
  retry?: Partial<RetryPolicy>;
  signal?: AbortSignal;
}

interface Entry<T> extends PlannedEntry {
  readonly index: number;
  readonly input: unknown;
  readonly value: T;
  readonly accountId: string;
  readonly position: SourcePosition | undefined;
  /** The record's JSON, made once at write time: it sizes the batch and is sent verbatim. */
  readonly json: string;
}

/** Records sent in one request, and whether they are the resend of a 400 that named none of them. */
interface Group<T> {
  readonly entries: Entry<T>[];
  readonly resentAfterNamingNone: boolean;
}

// `{"accounts":[` + `]}`; commas are added per record.
const ENVELOPE_BYTES = 15;

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  return value === undefined ? fallback : parseInteger(value, name, { min: 1 });
}

/** The record's JSON, or why it has none. Validation has already refused records nested too
 * deeply (nesting.ts), but a valid record can still hold what JSON.stringify throws on: a BigInt
 * or a cycle in additionalData, a toJSON or getter that throws. That is one bad record, not a
 * reason to stop the writer. */
function serialise(value: unknown): string | { error: string } {
  try {
    return JSON.stringify(value);
  } catch (error) {
    return { error: `record cannot be written as JSON: ${firstLineOf(error)}` };
  }
}

function isPlainObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class RecordWriter<T> extends Writable {
  readonly #api: ServiceApi;
  readonly #kind: RecordKind<T>;
  // Set in _construct, which Node runs before the first _write.
  #validate: Validator<T> | undefined;
  readonly #planner: BatchPlanner<Entry<T>>;
  readonly #concurrency: number;
  readonly #maxBuffered: number;
  readonly #flushInterval: number;
  readonly #retry: Partial<RetryPolicy> | undefined;
  readonly #deliveryTimeoutMs: number;
  readonly #rejects: RejectsSink | undefined;
  readonly #abort = new AbortController();
  readonly #userSignal: AbortSignal | undefined;
  // The library's AbortError, as the export streams and sync() give, the signal's reason its cause.
  readonly #onUserAbort = (): void => void this.destroy(new AbortError(`Writing ${this.#kind.noun} was aborted.`, { cause: this.#userSignal?.reason }));
  // Handed to each of this writer's requests, so another writer's retries are never counted here.
  readonly #onRetry = (event: RetryEvent): void => {
    this.#summary.retries += 1;
    this.emit('retry', event);
  };
  // Several calls of this one can wait on the same renewal: each is told, 'refresh' is emitted once.
  readonly #renewals = new WeakSet<RefreshEvent>();
  readonly #onRefresh = (event: RefreshEvent): void => {
    if (this.#renewals.has(event)) return;
    this.#renewals.add(event);
    this.emit('refresh', event);
  };
  readonly #summary: WriterSummary = emptyWriterSummary();
  #inFlight = 0;
  #peakBuffered = 0;
  #timer: NodeJS.Timeout | undefined;
  /** The open batch the timer is for. */
  #timedBatch: number | undefined;
  #heldCallback: ((error?: Error | null) => void) | undefined;
  #rejectsBlocked = false;
  #rejectsFailed = false;
  /** Records of batches in flight not yet accepted or rejected. */
  readonly #unsettled = new Set<Entry<T>>();
  /** Set when the writer stops: nothing is counted after its records were reported as stopped. */
  #stopped = false;
  #finishing = false;
  #finalCallback: ((error?: Error | null) => void) | undefined;

  constructor(api: ServiceApi, kind: RecordKind<T>, opts: RecordWriterOptions = {}) {
    super({ objectMode: true, highWaterMark: opts.highWaterMark ?? 16 });
    this.#api = api;
    this.#kind = kind;
    const batchSize = positiveInteger('batchSize', opts.batchSize, 500);
    this.#concurrency = positiveInteger('concurrency', opts.concurrency, 2);
    this.#maxBuffered = positiveInteger('maxBuffered', opts.maxBuffered, batchSize * (this.#concurrency + 1));
    if (this.#maxBuffered < batchSize) throw new ConfigError('maxBuffered must be at least batchSize');
    this.#flushInterval = opts.flushInterval ?? 1000;
    if (!(this.#flushInterval >= 0)) throw new ConfigError('flushInterval must be 0 or more milliseconds');
    this.#planner = new BatchPlanner({
      batchSize,
      maxBatchBytes: positiveInteger('maxBatchBytes', opts.maxBatchBytes, 4 * 1024 * 1024),
    });
    this.#retry = opts.retry;
    this.#deliveryTimeoutMs = deliveryTimeoutOption(opts.deliveryTimeoutMs);
    if (opts.rejects !== undefined) {
      this.#rejects = new RejectsSink(opts.rejects);
      this.#rejects.onError((error) => {
        this.#rejectsFailed = true;
        this.destroy(error);
      });
    }
    this.#userSignal = opts.signal;
    if (opts.signal?.aborted) queueMicrotask(this.#onUserAbort);
    else opts.signal?.addEventListener('abort', this.#onUserAbort, { once: true });
  }

  /** Counts so far; final once 'finish' has been emitted (accepted + rejected === received). */
  get summary(): WriterSummary {
    return { ...this.#summary, rejectedByReason: { ...this.#summary.rejectedByReason } };
  }

  bufferState(): BufferState {
    return {
      buffered: this.#planner.buffered,
      peakBuffered: this.#peakBuffered,
      maxBuffered: this.#maxBuffered,
      inFlight: this.#inFlight,
      parked: this.#planner.parkedCount,
    };
  }

  override _construct(callback: (error?: Error | null) => void): void {
    // The rejects file is open before the first record is taken: one that cannot be opened fails
    // the writer at once, rather than once records were rejected with their reasons nowhere.
    Promise.all([this.#kind.validator(), this.#rejects?.opened()]).then(([validate]) => {
      this.#validate = validate;
      callback();
    }, (error: Error) => {
      // Stopped meanwhile (its signal, destroy()): that error stands alone, not merged with this.
      callback(this.destroyed ? null : error);
    });
  }

  override _write(chunk: unknown, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const index = this.#summary.received++;
    if (chunk instanceof MalformedRecord) {
      this.#reject({ index, ...chunk.position, reason: 'malformed', errors: [chunk.message], record: chunk.raw });
      return this.#release(callback);
    }
    const position = chunk instanceof SourceRecord ? chunk.position : undefined;
    const input = chunk instanceof SourceRecord ? chunk.value : chunk;
    let result: ReturnType<Validator<T>>;
    try {
      result = this.#validate!(input);
    } catch (error) {
      // A getter or a Proxy that throws when read: one bad record, not a reason to stop.
      result = { ok: false, errors: [`record cannot be read: ${firstLineOf(error)}`] };
    }
    if (!result.ok) {
      const reason = isPlainObject(input) ? 'invalid' : 'malformed';
      this.#reject({ index, ...position, reason, errors: result.errors, record: input });
      return this.#release(callback);
    }
    const value = result.value;
    // Serialised here, once: the text both sizes the batch and is the request body (the client
    // would otherwise stringify every record a second time). It also pins what is sent to the
    // record as it is now, should the caller reuse the object (before now, as with any object-mode
    // stream, a record waiting in the stream's buffer is the caller's object).
    const json = serialise(value);
    if (typeof json !== 'string') {
      this.#reject({ index, ...position, reason: 'invalid', errors: [json.error], record: input });
      return this.#release(callback);
    }
    this.#planner.add({
      index,
      input,
      value,
      position,
      key: this.#kind.key(value),
      accountId: this.#kind.accountId(value),
      bytes: Buffer.byteLength(json) + 1,
      json,
    });
    this.#peakBuffered = Math.max(this.#peakBuffered, this.#planner.buffered);
    this.#timeOpenBatch();
    this.#pump();
    this.#release(callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#finishing = true;
    this.#clearFlushTimer();
    this.#finalCallback = callback;
    this.#pump();
    void this.#maybeFinish();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#clearFlushTimer();
    this.#detach();
    this.#abort.abort(error ?? new Error('writer destroyed'));
    this.#rejectHeld();
    const rejects = this.#rejects;
    if (rejects === undefined || this.#rejectsFailed) {
      rejects?.destroy();
      callback(error);
      return;
    }
    // Ended, not destroyed: a destroyed file stream drops the lines still queued.
    rejects.close().then(() => callback(error), (closeError: Error) => callback(error ?? closeError));
  }

  /** Rejects every record held (once, as the writer stops): those whose request was in flight,
   * then those not sent, in write order within each. */
  #rejectHeld(): void {
    if (this.#stopped) return;
    const inFlight = [...this.#unsettled].sort((a, b) => a.index - b.index);
    const unsent = this.#planner.takeUnsent().sort((a, b) => a.index - b.index);
    for (const entry of inFlight) this.#rejectEntry(entry, 'stopped', ['stopped while its request was in flight: the service may have applied it']);
    for (const entry of unsent) this.#rejectEntry(entry, 'stopped', ['stopped before it was sent']);
    this.#stopped = true;
  }

  // ---- backpressure

  #saturated(): boolean {
    return this.#planner.buffered >= this.#maxBuffered;
  }

  /** Completes the write now, or holds its callback until there is room again. */
  #release(callback: (error?: Error | null) => void): void {
    if (this.#saturated() || this.#rejectsBlocked) this.#heldCallback = callback;
    else callback();
  }

  #resume(): void {
    const callback = this.#heldCallback;
    if (callback === undefined || this.#saturated() || this.#rejectsBlocked) return;
    this.#heldCallback = undefined;
    callback();
  }

  // ---- batching

  /** The open batch is sent flushInterval after its first record at the latest (a source that
   * trickles records still sees them go; a timer restarted at each write would wait for a pause):
   * timed while it has records, not once it is sealed. */
  #timeOpenBatch(): void {
    const open = this.#planner.openId;
    if (open === this.#timedBatch) return;
    this.#clearFlushTimer();
    if (open === undefined || this.#finishing) return;
    this.#timedBatch = open;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timedBatch = undefined;
      this.#planner.seal();
      this.#pump();
    }, this.#flushInterval);
  }

  #clearFlushTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timedBatch = undefined;
  }

  #pump(): void {
    if (this.destroyed) return;
    // No more records will fill the open batch (end() was called, or writes are held back):
    // waiting for it to fill up would only stall.
    if (this.#finishing || (this.#saturated() && this.#inFlight < this.#concurrency)) this.#planner.seal();
    while (this.#inFlight < this.#concurrency) {
      const batch = this.#planner.take();
      if (batch === undefined) break;
      this.#inFlight += 1;
      this.#summary.batches += 1;
      for (const entry of batch.entries) this.#unsettled.add(entry);
      this.#deliver(batch).then(
        (event) => this.#settled(batch, event),
        (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
      );
    }
  }

  #settled(batch: Batch<Entry<T>>, event: BatchEvent): void {
    if (this.destroyed) return;
    this.#inFlight -= 1;
    this.#planner.settle(batch);
    this.emit('batch', event);
    this.emit('progress', this.summary);
    // Parked records promoted into the open batch are timed too.
    this.#timeOpenBatch();
    this.#pump();
    this.#resume();
    void this.#maybeFinish();
  }

  async #maybeFinish(): Promise<void> {
    const callback = this.#finalCallback;
    if (callback === undefined || this.#inFlight > 0 || !this.#planner.idle) return;
    this.#finalCallback = undefined;
    this.#detach();
    try {
      await this.#rejects?.close();
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  #detach(): void {
    this.#userSignal?.removeEventListener('abort', this.#onUserAbort);
  }

  // ---- sending

  async #deliver(batch: Batch<Entry<T>>): Promise<BatchEvent> {
    const event: BatchEvent = { id: batch.id, records: batch.entries.length, accepted: 0, rejected: 0, requests: 0, bytes: 0 };
    const deadline = new DeliveryDeadline(this.#deliveryTimeoutMs);
    const groups: Group<T>[] = [{ entries: batch.entries, resentAfterNamingNone: false }];
    for (let group = groups.shift(); group !== undefined; group = groups.shift()) {
      const { entries } = group;
      const bytes = entries.reduce((sum, entry) => sum + entry.bytes, ENVELOPE_BYTES - 1);
      event.requests += 1;
      event.bytes += bytes;
      this.#summary.requests += 1;
      this.#summary.bytes += bytes;
      const opts: AccountsRequestOptions = {
        signal: this.#abort.signal,
        retry: deadline.policyFor(this.#retry),
        recordsJson: entries.map((entry) => entry.json),
        onRetry: this.#onRetry,
        onRefresh: this.#onRefresh,
      };
      try {
        await this.#kind.send(this.#api, entries.map((entry) => entry.value), opts);
      } catch (error) {
        if (this.#stopped || this.#abort.signal.aborted || !(error instanceof LenderError)) throw error;
        if (error instanceof ValidationError) {
          const plan = planAfterValidationError(entries, error.failures, (entry) => entry.accountId, error.message, group.resentAfterNamingNone);
          for (const { entry, errors } of plan.rejected) this.#rejectEntry(entry, 'server', errors);
          event.rejected += plan.rejected.length;
          const action = plan.namedNone && plan.resend.length === 0 ? 'rejected' : 'resent';
          for (const { accountId, errors } of plan.unknown) {
            this.#anomaly({ kind: 'unknown-account', batch: batch.id, accountId, errors, records: entries.length, action });
          }
          groups.unshift(...plan.resend.map((resend) => ({ entries: resend, resentAfterNamingNone: plan.namedNone })));
        } else {
          for (const entry of entries) this.#rejectEntry(entry, 'failed', [error.message]);
          event.rejected += entries.length;
        }
        continue;
      }
      // An answer that arrives once the writer has stopped: its records were reported as stopped.
      if (this.#stopped) throw new Error('writer stopped');
      for (const entry of entries) this.#unsettled.delete(entry);
      event.accepted += entries.length;
      this.#summary.accepted += entries.length;
    }
    return event;
  }

  /** Reported, never silent: without an 'anomaly' listener it becomes a process warning. */
  #anomaly(event: AnomalyEvent): void {
    if (this.listenerCount('anomaly') > 0) this.emit('anomaly', event);
    else process.emitWarning(describeAnomaly(event), 'LenderAnomalyWarning');
  }

  // ---- rejects

  #rejectEntry(entry: Entry<T>, reason: RejectReason, errors: string[]): void {
    this.#unsettled.delete(entry);
    this.#reject({ index: entry.index, ...entry.position, reason, errors, record: entry.input });
  }

  #reject(event: RejectEvent): void {
    if (this.#stopped) return;
    this.#summary.rejected += 1;
    this.#summary.rejectedByReason[event.reason] = (this.#summary.rejectedByReason[event.reason] ?? 0) + 1;
    this.emit('reject', event);
    if (this.#rejects !== undefined && !this.#rejectsFailed && !this.#rejects.write(event) && !this.#rejectsBlocked) {
      this.#rejectsBlocked = true;
      this.#rejects.onceDrained(() => {
        this.#rejectsBlocked = false;
        this.#resume();
      });
    }
  }
}
