// Loading a dataset together with other processes (workers) through a lease board kept in the
// database. A load is cut into parts: the windows of an initial load, or one part for an
// incremental load. Each worker claims a part (a lease that it renews while it works and that
// another worker takes over once it expires), reads it as a bounded export of its own, and commits
// each page's rows with the part's state in one transaction, which fails if the lease was lost.
// The worker that sees the last part done merges the parts' high-water marks into the dataset's
// state. Every worker stays until the load is complete, so any one of them exiting 0 means done.
import type { ServiceApi } from '../core/api.ts';
import { AbortError, LenderError } from '../core/errors.ts';
import type { DatasetRef, ExportRow } from '../core/types.ts';
import { emptyLead, type ProbeContext } from '../exports/data-start.ts';
import type { ResolvedDataset } from '../exports/export-options.ts';
import { exportPages, type ExportOptions, type ExportStream } from '../exports/export-stream.ts';
import { compareCursorValues, type ValueMark } from '../exports/highwater.ts';
import { remainingWindows, startLoad } from '../exports/load-plan.ts';
import type { DatasetState } from '../exports/state.ts';
import type { ExportStats } from '../exports/stream-types.ts';
import { DEFAULT_ORIGIN, isWindowed, resolveWindowing } from '../exports/windows.ts';
import { SinkError } from './errors.ts';
import { commitInGroups, rowsOf } from './group-commit.ts';
import type { SinkDataset } from './sink.ts';

/** One part of a load: a time span of the initial load, or the whole incremental load. */
export interface PartPlan {
  since: string | null;
  until: string | null;
  /** The state the part's export starts from: null for a part of an initial load; the dataset's
   * completed state for an incremental load. */
  start: DatasetState | null;
}

export interface Claim {
  loadId: string;
  part: number;
  plan: PartPlan;
  /** The part's own state as last committed (a part taken over from a worker that stopped). */
  state: DatasetState | null;
}

/** A load as a worker joined it. */
export interface JoinedLoad {
  loadId: string;
  mode: 'initial' | 'incremental' | 'resumed';
}

/** The lease board of a shared sink, as the loading loop sees it. */
export interface LeaseBoard {
  /** This worker's name on the board (host, pid and a random tag). */
  readonly worker: string;
  /** The unfinished load of the dataset, or a new one planned by `plan` from its committed state
   * (of workers planning at once, one plan is kept and the others join it). */
  join(dataset: SinkDataset, plan: (committed: DatasetState | undefined) => Promise<LoadParts>): Promise<JoinedLoad>;
  /** A part nobody holds (pending, or its lease expired); else when to look again (ms), or 'done'
   * when every part is done. */
  claim(dataset: SinkDataset, loadId: string): Promise<Claim | { retryInMs: number } | 'done'>;
  /** Stores the rows and the part's state in one transaction; `done` marks the part complete.
   * Throws a LeaseLostError, committing nothing, when another worker holds the part now. */
  commit(dataset: SinkDataset, claim: Claim, rows: readonly ExportRow[], state: DatasetState, done: boolean): Promise<void>;
  /** Extends the lease; false when it was lost. */
  renew(dataset: SinkDataset, claim: Claim): Promise<boolean>;
  /** Once every part is done: the dataset's state, merged from the parts' states by `merge`, is
   * committed and the load closed (by whichever worker gets here first). */
  finish(dataset: SinkDataset, loadId: string, merge: (parts: DatasetState[], start: DatasetState | undefined) => DatasetState): Promise<void>;
  /** Gives a part up (this worker failed on it): it is pending again, from its last commit. */
  release(dataset: SinkDataset, claim: Claim): Promise<void>;
  /** How long a lease lasts without renewal. */
  readonly leaseMs: number;
}

/** A worker lost its claim on a part of a load: another worker took it over after its lease ran out. */
export class LeaseLostError extends SinkError {
  override name = 'LeaseLostError';
}

/** What a worker did for one dataset. */
export interface SharedLoadResult {
  mode: 'initial' | 'incremental' | 'resumed';
  stats: ExportStats;
  /** Parts this worker completed. */
  parts: number;
}

export interface SharedLoadOptions extends Omit<ExportOptions, 'state' | 'resume' | 'stateKey' | 'since' | 'until' | 'sort'> {
  onStream?: (stream: ExportStream) => void;
  /** Called after each commit with the dataset's code and how many rows it stored. */
  onCommit?: (dataset: string, rows: number) => void;
}

/** A new load as planned: its mode and its parts. */
export interface LoadParts {
  mode: 'initial' | 'incremental';
  parts: PartPlan[];
}

/**
 * The parts of a new load: the windows of an initial load, or the whole incremental load. A first
 * load from the default origin skips the months before the data, as a single export does
 * (data-start.ts), asking the probe's windows `concurrency` at a time: without it, a via dataset
 * whose rows start years after the origin had a part for every empty month, each claimed, read
 * and committed by a worker.
 */
export async function planParts(
  probe: ProbeContext, resolved: ResolvedDataset, committed: DatasetState | undefined, opts: SharedLoadOptions, now: Date,
): Promise<LoadParts> {
  if (committed?.highWater != null && committed.load == null) return { mode: 'incremental', parts: [{ since: null, until: null, start: committed }] };
  const windowing = resolveWindowing(opts.window, resolved.pathKind);
  const { load } = startLoad(undefined, { origin: opts.origin ?? DEFAULT_ORIGIN, windowing, sort: 'asc', now: now.toISOString() });
  const lead = opts.origin === undefined && isWindowed(windowing)
    ? await emptyLead(probe, load, resolved.cursorField, opts.concurrency ?? 1)
    : null;
  if (lead !== null) load.progress = { done: [lead], open: [] };
  const parts: PartPlan[] = [];
  const windows = remainingWindows(load);
  for (let next = windows.next(); next.done !== true; next = windows.next(1)) {
    parts.push({ since: next.value.window.since, until: next.value.window.until, start: null });
  }
  return { mode: 'initial', parts };
}

/** The dataset's state once all parts are done: the greatest high-water mark of the parts (the
 * ids at a value several parts reached, together), no load in progress. */
export function mergePartStates(key: string, parts: readonly DatasetState[], start: DatasetState | undefined): DatasetState {
  let highWater: ValueMark | null = start?.highWater ?? null;
  for (const part of parts) {
    const mark = part.highWater;
    if (mark == null) continue;
    const order = highWater === null ? 1 : compareCursorValues(mark.value, highWater.value);
    if (order > 0) highWater = { value: mark.value, ids: [...mark.ids] };
    else if (order === 0) highWater = { value: highWater!.value, ids: [...new Set([...highWater!.ids, ...mark.ids])] };
  }
  return { version: 1, dataset: key, highWater, load: null, completedAt: new Date().toISOString() };
}

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortError('The sync was aborted.', { cause: signal.reason }));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortError('The sync was aborted.', { cause: signal?.reason }));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** One dataset of a shared sync, as this worker follows it. */
interface SharedDataset {
  ref: DatasetRef;
  resolved: ResolvedDataset;
  dataset: SinkDataset;
  joined: JoinedLoad | undefined;
  result: SharedLoadResult;
}

/** What a worker did across the datasets of a sync: a result per dataset loaded, an error per
 * dataset that failed (the others went on). */
export interface SharedSyncResult {
  loaded: Map<string, SharedLoadResult>;
  failed: Map<string, LenderError>;
}

/**
 * Takes part in the loads of the datasets until every one is complete: joins (or plans) each
 * load, then claims, reads and commits parts. A worker that finds every part of a dataset held by
 * others goes on to the next dataset rather than wait, and waits only when no dataset has a part
 * free, until a lease may have run out. A dataset that fails with a service or sink error is
 * given up (its part released for another worker or run) and the others go on.
 */
export async function syncShared(
  api: ServiceApi, datasets: readonly { ref: DatasetRef; resolved: ResolvedDataset; dataset: SinkDataset }[], board: LeaseBoard,
  opts: SharedLoadOptions,
): Promise<SharedSyncResult> {
  const loaded = new Map<string, SharedLoadResult>();
  const failed = new Map<string, LenderError>();
  let open: SharedDataset[] = datasets.map((named) => ({
    ...named, joined: undefined,
    result: { mode: 'initial', stats: { rows: 0, pages: 0, windows: 0, splits: 0, retries: 0 }, parts: 0 },
  }));
  while (open.length > 0) {
    let wait = Infinity;
    let worked = false;
    for (const item of open) {
      try {
        const step = await stepDataset(api, item, board, opts);
        if (step === 'done') loaded.set(item.dataset.code, item.result);
        else if (step === 'worked') worked = true;
        else wait = Math.min(wait, step.retryInMs);
      } catch (error) {
        if (opts.signal?.aborted === true || !(error instanceof LenderError)) throw error;
        failed.set(item.dataset.code, error);
      }
      // After a part, start again from the first dataset: the load order stays the catalog's.
      if (worked) break;
    }
    open = open.filter((item) => !loaded.has(item.dataset.code) && !failed.has(item.dataset.code));
    if (!worked && open.length > 0) await sleep(wait, opts.signal);
  }
  return { loaded, failed };
}

/** One step of a dataset's load: read one part, or find it done, or learn when to look again. */
async function stepDataset(
  api: ServiceApi, item: SharedDataset, board: LeaseBoard, opts: SharedLoadOptions,
): Promise<'done' | 'worked' | { retryInMs: number }> {
  const { onStream, onCommit, ...exportOptions } = opts;
  const { dataset } = item;
  item.joined ??= await board.join(dataset, (committed) => {
    const probe: ProbeContext = {
      api, ref: item.ref, signal: opts.signal ?? new AbortController().signal,
      // The probe's retries are the dataset's too, as a single export counts them.
      onRetry: () => void (item.result.stats.retries += 1),
    };
    return planParts(probe, item.resolved, committed, opts, (opts.now ?? (() => new Date()))());
  });
  item.result.mode = item.joined.mode;
  const claim = await board.claim(dataset, item.joined.loadId);
  if (claim === 'done') {
    await board.finish(dataset, item.joined.loadId, (states, start) => mergePartStates(dataset.key, states, start));
    return 'done';
  }
  if ('retryInMs' in claim) return claim;
  const stream = exportPages(api, item.ref, {
    ...exportOptions,
    ...(claim.plan.since !== null && { since: claim.plan.since }),
    ...(claim.plan.until !== null && { until: claim.plan.until }),
    // A part of an initial load is one window of the plan; the export still halves it on a 504.
    ...(claim.plan.start === null && { window: 'none' }),
    resume: claim.state ?? claim.plan.start,
    stateKey: dataset.key,
  });
  onStream?.(stream);
  let stored = 0;
  try {
    const lost = await readPart(stream, dataset, claim, board, (rows) => {
      stored += rows;
      onCommit?.(dataset.code, rows);
    });
    if (!lost) item.result.parts += 1;
  } catch (error) {
    // Given up by this worker: another worker (or the next run) takes the part from its last commit.
    await board.release(dataset, claim).catch(() => undefined);
    throw error;
  } finally {
    // Rows are those this worker stored: a part lost to another worker was read further than that.
    for (const k of Object.keys(item.result.stats) as (keyof ExportStats)[]) item.result.stats[k] += k === 'rows' ? stored : stream.stats[k];
  }
  return 'worked';
}

/** The longest a timer waits; a longer delay fires at once (and then every millisecond). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Reads a claimed part to its end, committing page by page with the lease renewed meanwhile.
 * Returns true when the lease was lost (the part is another worker's now). */
async function readPart(
  stream: ExportStream, dataset: SinkDataset, claim: Claim, board: LeaseBoard, onStored: (rows: number) => void,
): Promise<boolean> {
  let lost = false;
  // Renewed in the background too: a page that takes long (retries, a slow service) must not let
  // the lease lapse while this worker still reads it.
  const heartbeat = setInterval(() => {
    board.renew(dataset, claim).then((held) => {
      if (!held && !lost) {
        lost = true;
        stream.destroy(new LeaseLostError(`${dataset.code}: part ${claim.part} was taken over by another worker`));
      }
    }, () => undefined);
  }, Math.min(MAX_TIMER_MS, Math.max(50, Math.floor(board.leaseMs / 3))));
  try {
    await commitInGroups(stream, (page) => page.rows.length, async (group) => {
      const rows = rowsOf(group);
      await board.commit(dataset, claim, rows, group.at(-1)!.checkpoint.state, false);
      onStored(rows.length);
    });
    await board.commit(dataset, claim, [], stream.completedState!, true);
    return false;
  } catch (error) {
    if (error instanceof LeaseLostError) return true;
    throw error;
  } finally {
    clearInterval(heartbeat);
    stream.destroy();
  }
}
