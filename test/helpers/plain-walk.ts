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

/** plainWalk in month windows over the sandbox's data span (and open-ended ones around it), a
 * window that still answers 504 read as its two halves: the reference read of a via dataset
 * larger than the gateway's budget, where even the widest bounded window answers 504. */
export async function monthlyWalk(client: ServiceApi, dataset: DatasetRef, query: PageQuery = {}): Promise<ExportRow[]> {
  const start = new Date(DATA_SPAN.start);
  const bounds = [Date.parse(EVERYTHING.since!)];
  for (let m = 0; Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + m, 1) <= Date.parse(DATA_SPAN.end); m++) {
    bounds.push(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + m, 1));
  }
  bounds.push(Date.parse(EVERYTHING.until!));
  const rows: ExportRow[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) rows.push(...(await walkRange(client, dataset, query, bounds[i]!, bounds[i + 1]!)));
  return rows;
}

async function walkRange(client: ServiceApi, dataset: DatasetRef, query: PageQuery, since: number, until: number): Promise<ExportRow[]> {
  const rows: ExportRow[] = [];
  let cursor: string | null = null;
  try {
    do {
      const page = await client.fetchPage(
        dataset,
        { limit: 1000, ...query, since: new Date(since).toISOString(), until: new Date(until).toISOString(), ...(cursor !== null && { cursor }) },
        { retry: { retryGatewayTimeout: false } },
      );
      rows.push(...page.rows);
      cursor = page.pagination.nextCursor;
    } while (cursor !== null);
    return rows;
  } catch (error) {
    if ((error as { status?: number }).status !== 504 || until - since < 2) throw error;
    const middle = since + Math.floor((until - since) / 2);
    return [...(await walkRange(client, dataset, query, since, middle)), ...(await walkRange(client, dataset, query, middle, until))];
  }
}
