// Reference data for tests: what a freshly started sandbox serves for a generated dataset,
// computed without a server, so an HTTPS walk can be compared with the generator's own list.
import type { ExportRow } from './redact.ts';
import type { GeneratedCode } from './generated-rows.ts';
import { GeneratedTable } from './generated-table.ts';

/** The tenant's rows of a generated dataset in ascending (cursor value, id) order, redacted. */
export function expectedGeneratedRows(seed: number, scale: number, tenantIndex: number, code: GeneratedCode): ExportRow[] {
  const table = new GeneratedTable({ seed, scale, tenantIndex, code });
  return table.index.entries().filter((e) => e.own).map((e) => table.render(e.id, e.ts));
}
