// Response bodies of the export endpoints (SPEC.md Endpoints 5-6 and "Errors").
import type { RouteResponse } from '../contracts.ts';

export function exportOk(body: unknown): RouteResponse {
  return { status: 200, body: { code: 200, message: 'success', body, errors: [] } };
}

export function exportError(status: number, message: string, requestId: string): RouteResponse {
  return { status, body: { success: false, message, requestId } };
}

export const MESSAGES = {
  unknownSection: 'Unknown section',
  unknownDataset: 'Unknown dataset',
  unavailable: (code: string) => `Dataset ${code} is listed in the catalog but not available for export at this time.`,
  malformedCursor: 'Malformed cursor',
  /** SPEC.md does not show the 504 body; this is the sandbox's wording. */
  gatewayTimeout: 'Gateway timeout',
} as const;
