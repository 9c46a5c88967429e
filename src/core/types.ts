// Shapes of the service's requests and responses as the client sees them (docs/service-contract.md).
import type { CursorField, DatasetCode, SectionCode, TenantPathKind } from './catalog.ts';

/** The tokens of a logged-in session, as login returns them; give it to `LenderClient.resume` to continue the session elsewhere. */
export interface LoginSession {
  token: string;
  refreshToken: string;
  lenderPublicId: string;
}

/** A dataset as the live catalog lists it, with whether it is available to this lender. */
export interface CatalogDataset {
  code: string;
  name: string;
  cursorField: CursorField;
  pageMax: number;
  available: boolean;
}

/** A section of the live catalog and its datasets. */
export interface CatalogSection {
  code: string;
  name: string;
  datasets: CatalogDataset[];
}

/** The live catalog, as `client.catalog()` returns it. */
export interface Catalog {
  schemaVersion: string;
  sections: CatalogSection[];
}

/** Query of one export page (the dataset fetch endpoint). Cursors are opaque: pass them back verbatim. */
export interface PageQuery {
  since?: string;
  until?: string;
  cursor?: string;
  limit?: number;
  sort?: 'asc' | 'desc';
  includeTotal?: boolean;
}

/** Where a page sits in its dataset: rows returned, the cursor of the next page (null at the end) and, when asked for, the total. */
export interface Pagination {
  limit: number;
  returned: number;
  nextCursor: string | null;
  total?: number | null;
  totalExact?: boolean;
  totalNote?: 'capped' | 'timeout' | 'window_required';
}

/** What the service says about how a page was read: cursor field, sort, time bounds and tenant path. */
export interface PageMeta {
  schemaVersion: string;
  cursorField: CursorField;
  sort: 'asc' | 'desc';
  since: string | null;
  until: string | null;
  tenantPathKind: TenantPathKind;
  readFrom: 'primary' | 'secondary';
}

/** One exported row, as the service sent it. */
export type ExportRow = Record<string, unknown>;

/** One export page as the service returns it (`client.fetchPage`): rows, pagination and meta. */
export interface ExportPageBody {
  section: { code: SectionCode; name: string };
  dataset: { code: DatasetCode; name: string };
  rows: ExportRow[];
  pagination: Pagination;
  meta: PageMeta;
}

/** Addressing a dataset: its code alone ('D07' => S2/D07) or section and code. */
export type DatasetRef = DatasetCode | { section: string; dataset: string };

/** The service's answer when the account endpoints accept a request (`upsertAccounts`, `updateStatus`). */
export interface AccountsAccepted {
  code: 200;
  message: string;
  body: string;
  errors: [];
}
