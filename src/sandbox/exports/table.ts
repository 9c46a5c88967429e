// What a page read needs from a dataset table, whatever feeds it (generator or accounts state).
import type { KeysetIndex } from './keyset-index.ts';
import type { ExportRow } from './redact.ts';

export interface ExportTable {
  /** Every row of the tenant's data store for the dataset, ordered by (cursor value, id); the
   * `own` flag is layer two of tenant isolation (the row's lender id is the tenant's). */
  readonly index: KeysetIndex;
  /** The redacted row of an own entry of the index. */
  render(id: number, ts: number): ExportRow;
}

/** Internal lender id of a tenant (layer two). Rows of a sibling lender sharing the tenant's data
 * store carry FOREIGN_LENDER_BASE + index, so a read that forgets the filter would leak them. */
export function lenderIdOf(tenantIndex: number): number {
  return 1000 + tenantIndex;
}

export const FOREIGN_LENDER_BASE = 9000;
