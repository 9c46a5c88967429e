// Turning an AbortSignal into the rejection callers expect, and waiting on shared work (such
// as a single-flight token refresh) without letting one caller's abort cancel it for the rest.
import { AbortError } from './errors.ts';

export function abortErrorFrom(signal: AbortSignal): AbortError {
  const reason: unknown = signal.reason;
  return new AbortError('The request was aborted.', reason === undefined ? undefined : { cause: reason });
}

/** Resolves with `promise`, or rejects with an AbortError as soon as `signal` fires. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(abortErrorFrom(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortErrorFrom(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve(value); },
      (error: unknown) => { signal.removeEventListener('abort', onAbort); reject(error); },
    );
  });
}
