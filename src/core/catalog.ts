// Static metadata of the export datasets, as the service documents its export catalog
// (docs/service-contract.md). Availability here is only the documented last listing: the live catalog
// (client.catalog()) is the authority for what can be fetched now.

/** The code of a section of the export catalog. */
export type SectionCode = 'S1' | 'S2' | 'S3' | 'S4' | 'S5';
/** The row field a dataset is paged, windowed and loaded incrementally by. */
export type CursorField = 'updated_at' | 'created_at' | 'communicated_at';
/** How the service's tenant filter reaches a dataset: `direct`, or `via` a parent collection (pages may come short or empty; read in windows). */
export type TenantPathKind = 'direct' | 'via';

/** A section of the documented catalog: its code and name. */
export interface SectionInfo {
  readonly code: SectionCode;
  readonly name: string;
}

/** A dataset of the documented catalog: code, section, name, cursor field, path kind and availability at the last listing. */
export interface DatasetInfo {
  readonly code: DatasetCode;
  readonly section: SectionCode;
  readonly name: string;
  readonly cursorField: CursorField;
  readonly pathKind: TenantPathKind;
  /** Availability at the documented last listing; the live catalog may differ. */
  readonly availableAtListing: boolean;
}

/** The sections of the documented export catalog, in order. */
export const SECTIONS: readonly SectionInfo[] = [
  { code: 'S1', name: 'Customers & Accounts' },
  { code: 'S2', name: 'Payments & Settlements' },
  { code: 'S3', name: 'Collections Cases' },
  { code: 'S4', name: 'Communications' },
  { code: 'S5', name: 'Reference & Configuration' },
];

/** Every dataset code of the documented export catalog, in order. */
export const DATASET_CODES = [
  'D01', 'D02', 'D03', 'D04', 'D05', 'D06', 'D07', 'D08', 'D09', 'D10', 'D11', 'D12', 'D13',
  'D14', 'D15', 'D16', 'D17', 'D18', 'D19', 'D20', 'D21', 'D22', 'D23', 'D24', 'D26',
] as const;
/** A dataset code of the documented catalog, such as `'D07'`. */
export type DatasetCode = (typeof DATASET_CODES)[number];

function ds(
  code: DatasetCode, section: SectionCode, name: string, cursorField: CursorField,
  pathKind: TenantPathKind, availableAtListing: boolean,
): DatasetInfo {
  return { code, section, name, cursorField, pathKind, availableAtListing };
}

/** The datasets of the documented export catalog; what is available now comes from `client.catalog()`. */
export const DATASETS: readonly DatasetInfo[] = [
  ds('D01', 'S1', 'Borrowers', 'updated_at', 'direct', true),
  ds('D02', 'S1', 'Borrower Accounts', 'updated_at', 'direct', true),
  ds('D03', 'S1', 'Borrower Sub Accounts', 'updated_at', 'via', true),
  ds('D04', 'S1', 'Borrower Account Debt Logs', 'created_at', 'direct', false),
  ds('D05', 'S1', 'Borrower Account Events', 'created_at', 'direct', true),
  ds('D06', 'S1', 'Borrower Custom Attribute Logs', 'created_at', 'direct', false),
  ds('D07', 'S2', 'Borrower Payments', 'updated_at', 'direct', true),
  ds('D08', 'S2', 'Borrower Payment Plans', 'updated_at', 'direct', true),
  ds('D09', 'S2', 'Borrower Payment Plan Installments', 'updated_at', 'direct', true),
  ds('D10', 'S2', 'Borrower Payment Plan Installment Logs', 'created_at', 'direct', false),
  ds('D11', 'S2', 'Borrower Payment Plan Logs', 'created_at', 'direct', false),
  ds('D12', 'S2', 'Scheduled Payments', 'updated_at', 'direct', true),
  ds('D13', 'S2', 'Scheduled Payment Logs', 'created_at', 'direct', false),
  ds('D14', 'S2', 'Payment Proofs', 'updated_at', 'direct', true),
  ds('D15', 'S2', 'Borrower Settlements', 'updated_at', 'direct', true),
  ds('D16', 'S3', 'Borrower Deals', 'updated_at', 'direct', true),
  ds('D17', 'S3', 'Borrower Deal Activity Logs', 'created_at', 'via', true),
  ds('D18', 'S3', 'Borrower Deal Logs', 'created_at', 'via', true),
  ds('D19', 'S3', 'Deal Activity Logs', 'created_at', 'via', true),
  ds('D20', 'S3', 'Deal Views', 'updated_at', 'direct', true),
  ds('D21', 'S4', 'Communication Logs', 'communicated_at', 'via', true),
  ds('D22', 'S4', 'Conversations', 'updated_at', 'via', true),
  ds('D23', 'S4', 'Manual Communication Logs', 'communicated_at', 'via', true),
  ds('D24', 'S4', 'Manual Communication Log Outcomes', 'updated_at', 'direct', false),
  ds('D26', 'S5', 'User Lender Details', 'updated_at', 'direct', true),
];

const BY_CODE = new Map<string, DatasetInfo>(DATASETS.map((d) => [d.code, d]));

/** The known codes for a message: "D01 to D26 (D25 does not exist)". */
export function knownCodesText(): string {
  const numbers = DATASET_CODES.map((code) => Number(code.slice(1)));
  const gaps: string[] = [];
  for (let n = numbers[0]!; n < numbers.at(-1)!; n += 1) if (!numbers.includes(n)) gaps.push(`D${String(n).padStart(2, '0')}`);
  const range = `${DATASET_CODES[0]} to ${DATASET_CODES.at(-1)}`;
  return gaps.length === 0 ? range : `${range} (${gaps.join(', ')} ${gaps.length === 1 ? 'does' : 'do'} not exist)`;
}

/**
 * Whether a value has the shape of a section or dataset code: an upper-case letter, then
 * upper-case letters and digits (S2, D07). Codes from outside (the live catalog, an explicit
 * {section, dataset}) must have it before they name a URL, a file, a table or a key of a state
 * file: no '../', no 'toString'.
 */
export function isCodeShaped(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Z][A-Z0-9]{0,15}$/.test(value);
}

/** Whether a string is a dataset code of the documented catalog. */
export function isDatasetCode(value: string): value is DatasetCode {
  return BY_CODE.has(value);
}

/** Metadata of a dataset code, or undefined when the code is not in the catalog. */
export function datasetInfo(code: string): DatasetInfo | undefined {
  return BY_CODE.get(code);
}

/** Name of a section code, or undefined when the code is not in the catalog. */
export function sectionInfo(code: string): SectionInfo | undefined {
  return SECTIONS.find((s) => s.code === code);
}

/** The export schema version this library is written against. */
export const SCHEMA_VERSION = 'v1';
/** The largest page the export endpoint serves (`limit` 1..1000). */
export const PAGE_MAX = 1000;
