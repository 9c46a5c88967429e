// Shapes of the service's requests and responses as the client sees them (docs/service-contract.md).
import type { CursorField, DatasetCode, SectionCode, TenantPathKind } from '../catalog/datasets.ts';

export interface LoginSession {
  token: string;
  refreshToken: string;
  lenderPublicId: string;
}

export interface CatalogDataset {
  code: string;
  name: string;
  cursorField: CursorField;
  pageMax: number;
  available: boolean;
}

export interface CatalogSection {
  code: string;
  name: string;
  datasets: CatalogDataset[];
}

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

export interface Pagination {
  limit: number;
  returned: number;
  nextCursor: string | null;
  total?: number | null;
  totalExact?: boolean;
  totalNote?: 'capped' | 'timeout' | 'window_required';
}

export interface PageMeta {
  schemaVersion: string;
  cursorField: CursorField;
  sort: 'asc' | 'desc';
  since: string | null;
  until: string | null;
  tenantPathKind: TenantPathKind;
  readFrom: 'primary' | 'secondary';
}

export type ExportRow = Record<string, unknown>;

/** body of a 200 from Endpoint 6. */
export interface ExportPageBody {
  section: { code: SectionCode; name: string };
  dataset: { code: DatasetCode; name: string };
  rows: ExportRow[];
  pagination: Pagination;
  meta: PageMeta;
}

/** Addressing a dataset: its code alone ('D07' => S2/D07) or section and code. */
export type DatasetRef = DatasetCode | { section: string; dataset: string };

/** 200 envelope of the account endpoints. */
export interface AccountsAccepted {
  code: 200;
  message: string;
  body: string;
  errors: [];
}
