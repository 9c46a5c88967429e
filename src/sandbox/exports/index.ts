// The export half of the sandbox: catalog and page routes, the listener that turns the accounts
// state into D01/D02/D03/D05, and the admin calls that make data move (advance, churn).
import type { ExportsModule, PortfolioListener, Route, RouteResponse, SandboxContext, Tenant } from '../contracts.ts';
import { catalogBody } from './catalog.ts';
import { Churn } from './churn.ts';
import { exportError } from '../responses.ts';
import { exportOk } from './envelopes.ts';
import { tableKey } from './generated-rows.ts';
import { handlePageRequest, type PageRouteSettings } from './page-route.ts';
import { accountRaw, debtorRaw, eventRaw, subAccountRaw } from './portfolio-rows.ts';
import { ReplicaLag } from './replica.ts';
import { ExportStore } from './store.ts';
import { lenderIdOf } from './table.ts';

/** Knobs of the export half that SandboxOptions does not carry. */
export interface ExportsTuning {
  /** meta.readFrom of every page. Default 'secondary' with a replica lag, else 'primary'. */
  readonly readFrom?: 'primary' | 'secondary';
  /** Store rows a windowed includeTotal count of a via dataset may evaluate before it answers
   * totalNote 'timeout'. Default: half of options.viaBudget. The count runs inside the page's
   * request, so its budget is the part of the gateway's it may spend: a window the page can be
   * read in may still be too wide to count. */
  readonly countBudget?: number;
}

/** Churn above this would spend the event loop on writes rather than on serving pages. */
const MAX_CHURN_RATE = 100_000;

export function createExportsModule(
  ctx: SandboxContext, seedPortfolio: (tenant: Tenant) => void, tuning: ExportsTuning = {},
): ExportsModule {
  const { seed, scale } = ctx.options;
  const tenantAt = new Map(ctx.tenants.map((t) => [t.index, t]));
  const store = new ExportStore({
    seed, scale, tenantIndexes: [...tenantAt.keys()],
    beforePortfolioRead: (index) => seedPortfolio(tenantAt.get(index)!),
  });
  const churn = new Churn(seed, () => store.builtGeneratedTables(), () => ctx.now().getTime());
  const replica = new ReplicaLag(ctx.options.replicaLagMs);
  const settings = (): PageRouteSettings => ({
    // Read live: availability changes while clients run.
    available: ctx.availability,
    viaBudget: ctx.options.viaBudget,
    gatewayTimeoutMs: ctx.options.gatewayTimeoutMs,
    countBudget: tuning.countBudget ?? Math.floor(ctx.options.viaBudget / 2),
    totalCap: ctx.options.totalCap,
    readFrom: tuning.readFrom ?? (ctx.options.replicaLagMs > 0 ? 'secondary' : 'primary'),
    strict: ctx.options.strict,
  });

  // Every change of the accounts state reaches the export through the replica (at once when
  // there is no lag, and for the seeded portfolio, written before the sandbox serves).
  const listener: PortfolioListener = {
    debtor(tenant, record) {
      replica.apply(() => store.portfolio(tenant.index, 'D01').upsert(record.id, record.updatedAt, () => debtorRaw(record, lenderIdOf(tenant.index))));
    },
    account(tenant, record) {
      replica.apply(() => store.portfolio(tenant.index, 'D02').upsert(record.id, record.updatedAt, () => accountRaw(record, lenderIdOf(tenant.index))));
    },
    subAccount(tenant, record) {
      replica.apply(() => store.portfolio(tenant.index, 'D03').upsert(record.id, record.updatedAt, () => subAccountRaw(record, lenderIdOf(tenant.index))));
    },
    event(tenant, record) {
      const key = tableKey(seed, tenant.index, 'D05');
      replica.apply(() => store.portfolio(tenant.index, 'D05').upsert(record.id, record.createdAt, () => eventRaw(record, lenderIdOf(tenant.index), key)));
    },
    seeding(apply) {
      replica.inStep(apply);
    },
  };

  const advance = (): { updated: number; inserted: number } => store.advance(ctx.now().getTime());

  const routes: Route[] = [
    {
      method: 'GET',
      pattern: '/admin/v3/lenders/:lenderPublicId/exports/catalog',
      auth: 'export',
      // The catalog takes no query parameters: strict mode refuses any, as it refuses unknown
      // ones on a page (500, the export endpoints having no 400).
      handler: (req) => {
        const name = ctx.options.strict ? [...req.url.searchParams.keys()][0] : undefined;
        if (name !== undefined) return exportError(500, `Unknown query parameter '${name}'; the catalog takes none.`, req.requestId);
        return exportOk(catalogBody(ctx.availability));
      },
    },
    {
      method: 'GET',
      pattern: '/admin/v3/lenders/:lenderPublicId/exports/:sectionCode/:datasetCode',
      auth: 'export',
      handler: (req) => handlePageRequest(req, store, settings(), ctx.stats),
    },
    { method: 'POST', pattern: '/__sandbox/advance', auth: 'admin', handler: () => ({ status: 200, body: advance() }) },
    {
      method: 'POST',
      pattern: '/__sandbox/churn',
      auth: 'admin',
      handler: (req) => setChurn(churn, req.body),
    },
  ];

  return {
    routes,
    listener,
    advance,
    start() {
      if (ctx.options.churnRate > 0) churn.setRate(Math.min(ctx.options.churnRate, MAX_CHURN_RATE));
    },
    serving() {
      replica.start();
    },
    close() {
      churn.close();
      replica.close();
    },
  };
}

function setChurn(churn: Churn, body: unknown): RouteResponse {
  const rate = (body as { rate?: unknown } | undefined)?.rate;
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate > MAX_CHURN_RATE) {
    return { status: 400, body: { error: `Body must be {"rate": N} with N rows per second between 0 and ${MAX_CHURN_RATE}; 0 stops.` } };
  }
  churn.setRate(rate);
  return { status: 200, body: { rate, written: churn.written } };
}
