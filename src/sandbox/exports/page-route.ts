// The route of GET /admin/v3/lenders/:lenderPublicId/exports/:sectionCode/:datasetCode: one page
// of a dataset. The server has already checked the token and that the path's lender is the token's.
import { datasetInfo, SCHEMA_VERSION, sectionInfo } from '../../core/catalog.ts';
import type { RouteRequest, RouteResponse, SandboxStats } from '../contracts.ts';
import { type Availability, isAvailable } from './catalog.ts';
import { CursorError, type CursorKey, decodeCursor, encodeCursor } from './cursor.ts';
import { exportError, unauthorized } from '../responses.ts';
import { exportOk, MESSAGES } from './envelopes.ts';
import { isoOrNull, type PageQuery, parsePageQuery, QueryError } from './query.ts';
import { readPage } from './read-page.ts';
import type { ExportStore } from './store.ts';

export interface PageRouteSettings {
  readonly available: Availability;
  /** Rows a via read may scan in its window before the gateway answers 504. */
  readonly viaBudget: number;
  /** How long the gateway waits before that 504 (ms). */
  readonly gatewayTimeoutMs: number;
  readonly countBudget: number;
  readonly totalCap: number;
  readonly readFrom: 'primary' | 'secondary';
  /** No leniency in the query string or the cursor (query.ts). */
  readonly strict: boolean;
}

export function handlePageRequest(req: RouteRequest, store: ExportStore, settings: PageRouteSettings, stats: SandboxStats): RouteResponse {
  const tenant = req.tenant;
  if (tenant === undefined) return unauthorized('export', req.requestId);
  const section = sectionInfo(req.params['sectionCode'] ?? '');
  if (section === undefined) return exportError(404, MESSAGES.unknownSection, req.requestId);
  const info = datasetInfo(req.params['datasetCode'] ?? '');
  if (info === undefined || info.section !== section.code) return exportError(404, MESSAGES.unknownDataset, req.requestId);
  if (!isAvailable(info, settings.available)) return exportError(404, MESSAGES.unavailable(info.code), req.requestId);

  let query: PageQuery;
  let after: CursorKey | null = null;
  try {
    query = parsePageQuery(req.url.searchParams, settings.strict);
    if (query.cursor !== null) {
      after = decodeCursor(query.cursor, info.code, query.sort);
      // The base64url decoder ignores a trailing partial character; only the exact token is one.
      if (settings.strict && encodeCursor(after) !== query.cursor) throw new CursorError('not the token as issued');
    }
  } catch (error) {
    if (error instanceof CursorError) return exportError(500, MESSAGES.malformedCursor, req.requestId);
    if (error instanceof QueryError) return exportError(500, error.message, req.requestId);
    throw error;
  }

  const result = readPage(store.table(tenant.index, info.code), { ...query, after }, {
    pathKind: info.pathKind,
    scanBudget: info.pathKind === 'via' ? settings.viaBudget : null,
    countBudget: settings.countBudget,
    totalCap: settings.totalCap,
  });
  if (result.kind === 'gateway-timeout') {
    stats['gatewayTimeouts'] = (stats['gatewayTimeouts'] ?? 0) + 1;
    return { ...exportError(504, MESSAGES.gatewayTimeout, req.requestId), delayMs: settings.gatewayTimeoutMs };
  }

  const commit = (): void => {
    stats['exportPages'] = (stats['exportPages'] ?? 0) + 1;
    stats['exportRows'] = (stats['exportRows'] ?? 0) + result.rows.length;
  };
  const nextCursor = result.next === null ? null : encodeCursor({ dataset: info.code, sort: query.sort, ...result.next });
  return exportOk({
    section: { code: section.code, name: section.name },
    dataset: { code: info.code, name: info.name },
    rows: result.rows,
    pagination: { limit: query.limit, returned: result.rows.length, nextCursor, ...result.total },
    meta: {
      schemaVersion: SCHEMA_VERSION,
      cursorField: info.cursorField,
      sort: query.sort,
      since: isoOrNull(query.since),
      until: isoOrNull(query.until),
      tenantPathKind: info.pathKind,
      readFrom: settings.readFrom,
    },
  }, commit);
}
