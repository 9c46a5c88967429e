// Response bodies of the account endpoints, exactly as the service documents them for the accounts endpoint.
import type { RouteResponse } from '../contracts.ts';
import type { AccountErrorEntry } from './types.ts';

/** The documented 200; `commit` queues what was accepted, once the answer is sent as is. */
export function accepted(commit?: () => void): RouteResponse {
  const response = { status: 200, body: { code: 200, message: 'success', body: 'Processing started successfully', errors: [] } };
  return commit === undefined ? response : { ...response, commit };
}

export function rejected(errors: readonly AccountErrorEntry[]): RouteResponse {
  return { status: 400, body: { code: 400, message: null, body: '', errors } };
}
