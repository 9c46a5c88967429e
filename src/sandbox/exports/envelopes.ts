// Response bodies of the export endpoints (catalog and dataset fetch, and their documented errors); their error
// body is exportError of ../responses.ts, shared with the server's own export-route errors.
import type { RouteResponse } from '../contracts.ts';

export function exportOk(body: unknown, commit?: () => void): RouteResponse {
  const response = { status: 200, body: { code: 200, message: 'success', body, errors: [] } };
  return commit === undefined ? response : { ...response, commit };
}

export const MESSAGES = {
  unknownSection: 'Unknown section',
  unknownDataset: 'Unknown dataset',
  unavailable: (code: string) => `Dataset ${code} is listed in the catalog but not available for export at this time.`,
  malformedCursor: 'Malformed cursor',
  /** The service does not document the 504 body; this is the sandbox's wording. */
  gatewayTimeout: 'Gateway timeout',
} as const;
