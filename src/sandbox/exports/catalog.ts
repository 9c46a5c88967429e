// The export catalog endpoint: the static table, with availability overridable per
// sandbox because datasets flip from unavailable to available as they ship.
import { DATASETS, type DatasetCode, type DatasetInfo, PAGE_MAX, SCHEMA_VERSION, SECTIONS } from '../../core/catalog.ts';

export type Availability = Partial<Record<DatasetCode, boolean>>;

export function isAvailable(info: DatasetInfo, overrides: Availability): boolean {
  return overrides[info.code] ?? info.availableAtListing;
}

export function catalogBody(overrides: Availability): unknown {
  return {
    schemaVersion: SCHEMA_VERSION,
    sections: SECTIONS.map((section) => ({
      code: section.code,
      name: section.name,
      datasets: DATASETS.filter((d) => d.section === section.code).map((d) => ({
        code: d.code,
        name: d.name,
        cursorField: d.cursorField,
        pageMax: PAGE_MAX,
        available: isAvailable(d, overrides),
      })),
    })),
  };
}
