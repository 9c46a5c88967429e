// Errors of the export streams that the client's typed errors do not already cover.
import { GatewayTimeoutError, LenderError, type LenderErrorDetails } from '../core/errors.ts';
import type { Window } from './windows.ts';
import { describeWindow } from './windows.ts';
import { datasetInfo } from '../core/catalog.ts';

/** A window at the minimum split span still timed out after the client's own retries. */
export class WindowTimeoutError extends GatewayTimeoutError {
  override name = 'WindowTimeoutError';
  readonly dataset: string;
  readonly window: Window;
  constructor(dataset: string, window: Window, minSpanMs: number, details: LenderErrorDetails = {}) {
    // A via read costs the service its whole window whatever the limit: only a shorter window helps.
    const via = datasetInfo(dataset)?.pathKind === 'via';
    const advice = via ? 'a smaller minSplitSpan (--min-split in the CLI)' : 'a smaller limit or minSplitSpan (--limit, --min-split in the CLI)';
    super(
      `Reading ${dataset} in the window ${describeWindow(window)} still timed out (504) at the minimum window span of ` +
        `${spanText(minSpanMs)}; retry later, or pass ${advice}.`,
      details,
    );
    this.dataset = dataset;
    this.window = window;
  }

  /** False, unlike other 504s: the client already retried the request at the minimum span, and
   * the library does not retry the whole call; the message says what may help instead. */
  override get retryable(): boolean {
    return false;
  }
}

/** 90 seconds, 20 minutes, 1.5 hours, 2 days: the unit that keeps the figure readable. */
function spanText(ms: number): string {
  const units: [number, string][] = [[86_400_000, 'days'], [3_600_000, 'hours'], [60_000, 'minutes'], [1000, 'seconds']];
  const [size, name] = units.find(([unit]) => ms >= unit) ?? [1, 'milliseconds'];
  const figure = Math.round((ms / size) * 10) / 10;
  return `${figure} ${figure === 1 ? name.slice(0, -1) : name}`;
}

/** Some datasets of a sync failed; the others were loaded (and their state saved) all the same. */
export class SyncError<Summary = unknown> extends LenderError {
  override name = 'SyncError';
  /** The datasets that were loaded, as sync() would have returned them. */
  readonly summary: Summary;
  /** Each failed dataset code with its error. */
  readonly failures: Readonly<Record<string, LenderError>>;
  constructor(summary: Summary, failures: Record<string, LenderError>, attempted: number) {
    const codes = Object.keys(failures);
    const all = codes.length >= attempted;
    const what = all ? (attempted === 1 ? 'The dataset failed to sync' : `All ${attempted} datasets failed to sync`)
      : `${codes.length} of ${attempted} datasets failed to sync`;
    const next = all ? 'Run the sync again once the cause is fixed.'
      : `The others were loaded; run the sync again to retry the failed ${codes.length === 1 ? 'one' : 'ones'}.`;
    const said = failuresByMessage(failures).map(([names, message]) => `${names.join(', ')} (${message})`);
    super(`${what}: ${said.join('; ')}. ${next}`);
    this.summary = summary;
    this.failures = failures;
  }
}

/** The failures grouped by their message, in order: a cause common to every dataset (a schema the
 * user may not write to) is said once, with the datasets it failed. */
export function failuresByMessage(failures: Readonly<Record<string, Error>>): [names: string[], message: string][] {
  const groups = new Map<string, string[]>();
  for (const [name, error] of Object.entries(failures)) {
    const names = groups.get(error.message);
    if (names === undefined) groups.set(error.message, [name]);
    else names.push(name);
  }
  return [...groups].map(([message, names]) => [names, message]);
}
