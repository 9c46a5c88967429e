// Errors as one readable line. The full stack is one `.stack` away (or always, with
// LENDER_DEBUG=1), because a stack is noise for "dataset not available" and gold for a bug.
import { LenderError } from '../src/core/errors.ts';
import { redactText } from '../src/core/redact.ts';

const INTERRUPTED = 'ERR_SCRIPT_EXECUTION_INTERRUPTED';

export function isInterrupt(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; name?: unknown };
  return e.code === INTERRUPTED || e.code === 'ABORT_ERR' || e.name === 'AbortError';
}

/** One line for an error; credential-shaped text is cut, whoever made the error (user code too). */
export function oneLine(error: unknown): string {
  return redactText(describe(error));
}

function describe(error: unknown): string {
  if (isInterrupt(error)) return 'Interrupted: the running call was stopped (Ctrl-C).';
  if (error instanceof LenderError) {
    const extra = [error.status !== undefined ? `HTTP ${error.status}` : '', error.requestId ? `requestId ${error.requestId}` : '']
      .filter((s) => s !== '').join(', ');
    return `${error.name}: ${error.message}${extra ? ` (${extra})` : ''}`;
  }
  if (isErrorLike(error)) {
    // One line: the first that says something. A SyntaxError of a line with top-level await
    // begins with the code and a caret, and ends with what is wrong.
    const lines = error.message.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !/^\^+$/.test(l));
    const line = error.name === 'SyntaxError' ? lines.at(-1) : lines[0];
    return `${error.name}: ${line ?? ''}`;
  }
  return `Thrown: ${String(error)}`;
}

/** Errors from the REPL's own context come from another realm: `instanceof Error` is false. */
function isErrorLike(error: unknown): error is Error {
  return error instanceof Error ||
    (typeof error === 'object' && error !== null && typeof (error as Error).message === 'string' && typeof (error as Error).name === 'string');
}

export function stackOf(error: unknown): string {
  return redactText(fullStack(error));
}

function fullStack(error: unknown): string {
  if (isErrorLike(error)) {
    let text = error.stack ?? `${error.name}: ${error.message}`;
    let cause = error.cause;
    for (let depth = 0; cause !== undefined && depth < 5; depth += 1) {
      text += `\nCaused by: ${isErrorLike(cause) ? (cause.stack ?? cause.message) : String(cause)}`;
      cause = isErrorLike(cause) ? cause.cause : undefined;
    }
    return text;
  }
  return String(error);
}
