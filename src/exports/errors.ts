// Errors of the export streams that the client's typed errors do not already cover.
import { GatewayTimeoutError, LenderError, type LenderErrorDetails } from '../core/errors.ts';
import type { Window } from './windows.ts';
import { describeWindow } from './windows.ts';

/** A window at the minimum split span still timed out after the client's own retries. */
export class WindowTimeoutError extends GatewayTimeoutError {
  override name = 'WindowTimeoutError';
  readonly dataset: string;
  readonly window: Window;
  constructor(dataset: string, window: Window, minSpanMs: number, details: LenderErrorDetails = {}) {
    super(
      `Reading ${dataset} in the window ${describeWindow(window)} still timed out (504) at the minimum window span of ` +
        `${Math.round(minSpanMs / 60000)} minutes; retry later, or pass a smaller limit or minSplitSpan (--limit, --min-split in the CLI).`,
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

/** Some datasets of a sync failed; the others were loaded (and their state saved) all the same. */
export class SyncError<Summary = unknown> extends LenderError {
  override name = 'SyncError';
  /** The datasets that were loaded, as sync() would have returned them. */
  readonly summary: Summary;
  /** Each failed dataset code with its error. */
  readonly failures: Readonly<Record<string, LenderError>>;
  constructor(summary: Summary, failures: Record<string, LenderError>, attempted: number) {
    const codes = Object.keys(failures);
    super(
      `${codes.length} of ${attempted} datasets failed to sync: ` +
        codes.map((code) => `${code} (${failures[code]!.message})`).join('; ') +
        '. The others were loaded; run the sync again to retry the failed ones.',
    );
    this.summary = summary;
    this.failures = failures;
  }
}
