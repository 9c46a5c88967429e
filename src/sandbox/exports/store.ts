// The tenant data stores (layer one of tenant isolation): one set of tables per tenant, chosen
// by the token's tenant, never by the URL. Generated tables are built the first time anything
// touches them, so a sandbox at scale 1,000,000 starts at once and only pays for what is read.
import { datasetInfo, type DatasetCode } from '../../core/catalog.ts';
import { advancePlan, type AdvanceTarget } from './advance-plan.ts';
import { type GeneratedCode, GENERATED_CODES, isGeneratedCode } from './generated-rows.ts';
import { GeneratedTable, ownRowTarget } from './generated-table.ts';
import { isPortfolioCode, type PortfolioCode, PortfolioTable } from './portfolio-table.ts';
import type { ExportTable } from './table.ts';

/** The sibling lender's sub-accounts in D03's store, relative to the seeded portfolio (which the
 * accounts half caps at 20,000 sub-accounts whatever the scale). */
const D03_FOREIGN_SHARE = 0.4;
const SEEDED_PORTFOLIO_CAP = 20_000;

export interface StoreOptions {
  readonly seed: number;
  readonly scale: number;
  /** Tenant indexes served; advance() changes each of them. */
  readonly tenantIndexes: readonly number[];
  /** Called before a page of D01, D02, D03 or D05 is read: the tenant's seeded portfolio, applied
   * when first needed, must be in those tables by then. */
  readonly beforePortfolioRead?: (tenantIndex: number) => void;
}

export class ExportStore {
  readonly #options: StoreOptions;
  readonly #tables = new Map<string, ExportTable>();
  readonly #generated: GeneratedTable[] = [];
  /** Timestamp of each advance() so far; replayed on tables built later. */
  readonly #advances: number[] = [];

  constructor(options: StoreOptions) {
    this.#options = options;
  }

  /** The table a page is read from. */
  table(tenantIndex: number, code: DatasetCode): ExportTable {
    if (!isPortfolioCode(code)) return this.generated(tenantIndex, code as GeneratedCode);
    this.#options.beforePortfolioRead?.(tenantIndex);
    return this.portfolio(tenantIndex, code);
  }

  portfolio(tenantIndex: number, code: PortfolioCode): PortfolioTable {
    const key = `${tenantIndex}/${code}`;
    let table = this.#tables.get(key) as PortfolioTable | undefined;
    if (table === undefined) {
      table = new PortfolioTable(code);
      if (code === 'D03') {
        const seeded = Math.min(this.#options.scale, SEEDED_PORTFOLIO_CAP);
        table.addForeignRows(this.#options.seed, tenantIndex, Math.ceil(seeded * D03_FOREIGN_SHARE));
      }
      this.#tables.set(key, table);
    }
    return table;
  }

  generated(tenantIndex: number, code: GeneratedCode): GeneratedTable {
    if (!isGeneratedCode(code)) throw new Error(`${code} is not a generated dataset`);
    const key = `${tenantIndex}/${code}`;
    let table = this.#tables.get(key) as GeneratedTable | undefined;
    if (table === undefined) {
      table = new GeneratedTable({ seed: this.#options.seed, scale: this.#options.scale, tenantIndex, code });
      this.#advances.forEach((ms, call) => applyAdvance(table!, call, ms));
      this.#tables.set(key, table);
      this.#generated.push(table);
    }
    return table;
  }

  /** Generated tables built so far (what churn writes to: the ones being read). */
  builtGeneratedTables(): readonly GeneratedTable[] {
    return this.#generated;
  }

  /** Updates and inserts rows of every generated dataset of every tenant, stamped `ms`. Tables
   * not built yet record the call and replay it when built. */
  advance(ms: number): { updated: number; inserted: number } {
    const call = this.#advances.length;
    this.#advances.push(ms);
    for (const table of this.#generated) applyAdvance(table, call, ms);
    let updated = 0;
    let inserted = 0;
    for (const tenantIndex of this.#options.tenantIndexes) {
      for (const code of GENERATED_CODES) {
        const plan = advancePlan(advanceTarget(this.#options.seed, this.#options.scale, tenantIndex, code), call);
        updated += plan.updates.length;
        inserted += plan.inserts;
      }
    }
    return { updated, inserted };
  }
}

function advanceTarget(seed: number, scale: number, tenantIndex: number, code: GeneratedCode): AdvanceTarget {
  return {
    seed, scale, tenantIndex,
    datasetNumber: Number(code.slice(1)),
    ownRows: ownRowTarget(code, scale),
    updatable: datasetInfo(code)!.cursorField === 'updated_at',
  };
}

function applyAdvance(table: GeneratedTable, call: number, ms: number): void {
  const { seed, scale, tenantIndex, code } = table.spec;
  const plan = advancePlan(advanceTarget(seed, scale, tenantIndex, code), call);
  for (const ordinal of plan.updates) table.update(ordinal, ms);
  for (let i = 0; i < plan.inserts; i++) table.insert(ms);
}
