// Errors of the export streams that the client's typed errors do not already cover.
import { GatewayTimeoutError, type LenderErrorDetails } from '../client/errors.ts';
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
        `${Math.round(minSpanMs / 60000)} minutes; retry later, or pass a smaller limit or minSplitSpan.`,
      details,
    );
    this.dataset = dataset;
    this.window = window;
  }
}
