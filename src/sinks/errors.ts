// Errors of the sinks: a store that refuses what sync() asks of it, or holds what it cannot
// have written itself.
import { LenderError } from '../core/errors.ts';

/** A sink cannot go on: its store was changed outside sync(), or refused a write. The message
 * names the place and what to do; the rows and state already committed are intact. */
export class SinkError extends LenderError {
  override name = 'SinkError';
}
