// D01, D02, D03 or D05 of one tenant: the accounts state as the listener reports it. Each upsert
// moves the row's index entry to its new cursor value, which is what makes an updated row reappear
// at the end of an ascending walk instead of being skipped.
import { DATA_SPAN } from '../contracts.ts';
import { KeysetIndex } from './keyset-index.ts';
import { Rng } from '../../prng.ts';
import { mix } from './row-hash.ts';
import { type ExportRow, type RawRecord, redact } from './redact.ts';
import type { ExportTable } from './table.ts';

export type PortfolioCode = 'D01' | 'D02' | 'D03' | 'D05';

export const PORTFOLIO_CODES: readonly PortfolioCode[] = ['D01', 'D02', 'D03', 'D05'];

export function isPortfolioCode(code: string): code is PortfolioCode {
  return (PORTFOLIO_CODES as readonly string[]).includes(code);
}

/** Ids of the sibling lender's rows sit above any id the accounts half hands out (and within the
 * index's 32-bit ids). */
const FOREIGN_ID_BASE = 2 ** 31;

interface Entry {
  readonly ts: number;
  readonly raw: () => RawRecord;
}

export class PortfolioTable implements ExportTable {
  readonly code: PortfolioCode;
  readonly index = new KeysetIndex();
  readonly #rows = new Map<number, Entry>();

  constructor(code: PortfolioCode) {
    this.code = code;
  }

  /** Inserts or replaces the row `id`; `raw` builds its record when a page is served. */
  upsert(id: number, cursorIso: string, raw: () => RawRecord): void {
    const ts = Date.parse(cursorIso);
    const previous = this.#rows.get(id);
    if (previous !== undefined) this.index.remove(previous.ts, id);
    this.index.insert(ts, id, true);
    this.#rows.set(id, { ts, raw });
  }

  render(id: number): ExportRow {
    const entry = this.#rows.get(id);
    if (entry === undefined) throw new Error(`${this.code} has no row ${id}`);
    return redact(this.code, entry.raw());
  }

  /** Adds sub-accounts of a sibling lender sharing the store (D03 is a via dataset: its tenant
   * filter joins through the parent account, so those rows are scanned and dropped). They come
   * in clusters of 4-12 so short and empty pages happen at any limit up to a dozen. */
  addForeignRows(seed: number, tenantIndex: number, count: number): void {
    const rng = new Rng(mix(seed, tenantIndex, 3, 0xf0e1));
    const start = Date.parse(DATA_SPAN.start);
    const span = Date.parse(DATA_SPAN.end) - start;
    const clusters = Math.ceil(count / 8);
    let id = FOREIGN_ID_BASE;
    for (let c = 0; c < clusters && id - FOREIGN_ID_BASE < count; c++) {
      let ts = start + Math.floor(((c + rng.next()) * span) / clusters);
      const size = rng.int(4, 12);
      for (let k = 0; k < size && id - FOREIGN_ID_BASE < count; k++) {
        this.index.insert(ts, id++, false);
        ts += rng.int(0, 1000);
      }
    }
  }
}
