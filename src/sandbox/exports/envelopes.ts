// Response bodies of the export endpoints (SPEC.md Endpoints 5-6 and "Errors"); their error
// body is exportError of ../responses.ts, shared with the server's own export-route errors.
import type { RouteResponse } from '../contracts.ts';

export function exportOk(body: unknown): RouteResponse {
  return { status: 200, body: { code: 200, message: 'success', body, errors: [] } };
}

export const MESSAGES = {
  unknownSection: 'Unknown section',
  unknownDataset: 'Unknown dataset',
  unavailable: (code: string) => `Dataset ${code} is listed in the catalog but not available for export at this time.`,
  malformedCursor: 'Malformed cursor',
  /** SPEC.md does not show the 504 body; this is the sandbox's wording. */
  gatewayTimeout: 'Gateway timeout',
} as const;
