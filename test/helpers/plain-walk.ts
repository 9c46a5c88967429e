// The reference walk the tests compare the streams with: fetchPage with the cursor followed to
// null, nothing else (no windows, no dedupe, no state).
import assert from 'node:assert/strict';
import type { ServiceApi } from '../../src/core/api.ts';
import type { DatasetRef, ExportRow, PageQuery } from '../../src/core/types.ts';

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
