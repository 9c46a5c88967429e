// The reference walk the tests compare the streams with: fetchPage with the cursor followed to
// null, nothing else (no windows, no dedupe, no state).
import assert from 'node:assert/strict';
import type { ServiceApi } from '../../src/core/api.ts';
import type { DatasetRef, ExportRow, PageQuery } from '../../src/core/types.ts';
import { DATA_SPAN } from '../../src/sandbox/contracts.ts';

/** Pass a wide since/until for D03/D23 at scale: unbounded reads of those may answer 504. */
export async function plainWalk(client: ServiceApi, dataset: DatasetRef, query: PageQuery = {}): Promise<ExportRow[]> {
  const rows: ExportRow[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    assert.ok(++pages < 100_000, `the plain walk of ${JSON.stringify(dataset)} did not end`);
    const page = await client.fetchPage(dataset, { limit: 1000, ...query, ...(cursor !== null && { cursor }) });
    rows.push(...page.rows);
    cursor = page.pagination.nextCursor;
  } while (cursor !== null);
  return rows;
}

/** The widest window, for walks that must never be an unbounded read. */
export const EVERYTHING: PageQuery = { since: '2000-01-01T00:00:00.000Z', until: '2100-01-01T00:00:00.000Z' };

/** plainWalk in month windows over the sandbox's data span (and open-ended ones around it), for a
 * reference read of a via dataset larger than the gateway's budget, where even the widest
 * bounded window answers 504. */
export async function monthlyWalk(client: ServiceApi, dataset: DatasetRef, query: PageQuery = {}): Promise<ExportRow[]> {
  const start = new Date(DATA_SPAN.start);
  const bounds = [EVERYTHING.since!];
  for (let m = 0; Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + m, 1) <= Date.parse(DATA_SPAN.end); m++) {
    bounds.push(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + m, 1)).toISOString());
  }
  bounds.push(EVERYTHING.until!);
  const rows: ExportRow[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    rows.push(...(await plainWalk(client, dataset, { ...query, since: bounds[i]!, until: bounds[i + 1]! })));
  }
  return rows;
}
