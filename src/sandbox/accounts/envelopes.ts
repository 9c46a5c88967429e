// Response bodies of the account endpoints, exactly as the service documents them for the accounts endpoint.
import type { RouteResponse } from '../contracts.ts';
import type { AccountErrorEntry } from './types.ts';

export function accepted(): RouteResponse {
  return { status: 200, body: { code: 200, message: 'success', body: 'Processing started successfully', errors: [] } };
}

export function rejected(errors: readonly AccountErrorEntry[]): RouteResponse {
  return { status: 400, body: { code: 400, message: null, body: '', errors } };
}
