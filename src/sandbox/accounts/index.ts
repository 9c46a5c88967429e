// The accounts half of the sandbox: the accounts and update-status endpoints, the background
// processing behind them and the seeded portfolio, applied per tenant when first needed. Composed
// by the server as createAccountsModule(ctx, listener), where the listener is the export half
// turning every change into D01/D02/D03/D05 rows.
import type {
  AccountsModule,
  PortfolioListener,
  RouteRequest,
  RouteResponse,
  SandboxContext,
  Tenant,
} from '../contracts.ts';
import { accepted, rejected } from './envelopes.ts';
import { accountKey, applyAccountRecord, applyStatusUpdate, Portfolio } from './portfolio.ts';
import { ProcessingQueue } from './processing-queue.ts';
import { generateSeedPortfolio, seededSubAccountCount } from './seed-portfolio.ts';
import type { AccountInput, StatusUpdateInput } from './types.ts';
import { validateAccount, validateAccountStrict, validateRequestInSlices } from './validate-account.ts';
import { statusUpdateValidator } from './validate-status-update.ts';

export const ACCOUNTS_PATH = '/admin/v3/lenders/:lenderPublicId/accounts';
export const UPDATE_STATUS_PATH = '/admin/v3/lenders/:lenderPublicId/accounts/update-status';

type QueuedRecord =
  | { readonly kind: 'account'; readonly tenant: Tenant; readonly record: AccountInput }
  | { readonly kind: 'status'; readonly tenant: Tenant; readonly record: StatusUpdateInput };

function tenantOf(req: RouteRequest): Tenant {
  // The server resolves the tenant for every 'accounts' route; reaching here without one is a
  // wiring bug, which the server answers as a 500.
  if (!req.tenant) throw new Error('accounts route reached without a resolved tenant');
  return req.tenant;
}

export function createAccountsModule(ctx: SandboxContext, listener: PortfolioListener): AccountsModule {
  const portfolio = new Portfolio();
  // Accounts that queued upserts will create, per tenant: a flag sent right after the push that
  // creates its account must not fail just because the background has not caught up yet.
  const pendingCreates = new Map<string, number>();
  const pendingKey = (tenant: Tenant, debtorCompanyId: string, accountId: string): string =>
    `${tenant.lenderPublicId}/${accountKey(debtorCompanyId, accountId)}`;
  let warned = false;

  ctx.stats.accountsProcessed ??= 0;
  ctx.stats.accountsFailed ??= 0;
  ctx.stats.portfolioSeeded ??= 0;
  ctx.stats.queueDepth ??= 0;

  const queue = new ProcessingQueue<QueuedRecord>({
    // A record takes 15-50 µs to apply (more on a loaded machine), so a few hundred per turn keep
    // the sandbox answering other clients within milliseconds while a large push is applied.
    sliceSize: 250,
    apply: (item) => {
      const p = portfolio.of(item.tenant);
      const at = ctx.now().toISOString();
      if (item.kind === 'account') {
        if (item.record.status !== 3) {
          const key = pendingKey(item.tenant, item.record.debtorCompanyId, item.record.accountId);
          const left = (pendingCreates.get(key) ?? 1) - 1;
          if (left > 0) pendingCreates.set(key, left);
          else pendingCreates.delete(key);
        }
        applyAccountRecord(p, item.tenant, item.record, at, listener);
      } else {
        applyStatusUpdate(p, item.tenant, item.record, at, listener);
      }
      ctx.stats.accountsProcessed += 1;
      ctx.stats.queueDepth = queue.depth;
    },
    onError: (error) => {
      // One bad record (or a listener bug) must not stop the records behind it.
      ctx.stats.accountsFailed += 1;
      ctx.stats.queueDepth = queue.depth;
      if (!warned) {
        warned = true;
        process.emitWarning(`sandbox: a queued account record failed to apply: ${String(error)}`);
      }
    },
  });

  // A tenant's seeded portfolio is applied the first time its accounts state is needed rather than
  // at start: a session that logs in and reads the catalog or the generated datasets never waits
  // for it. Its records are the same whenever that happens: their ids count per tenant and their
  // stamps are the seed's, inside DATA_SPAN.
  // Applied through the same processing as pushes; not counted in accountsProcessed, which counts
  // what the endpoints accepted.
  const seeded = new Set<string>();
  const seed = (tenant: Tenant): void => {
    if (seeded.has(tenant.lenderPublicId)) return;
    seeded.add(tenant.lenderPublicId);
    const p = portfolio.of(tenant);
    listener.seeding(() => {
      for (const op of generateSeedPortfolio(ctx.options.seed, tenant.index, seededSubAccountCount(ctx.options.scale))) {
        if (op.kind === 'account') applyAccountRecord(p, tenant, op.record, op.at, listener);
        else applyStatusUpdate(p, tenant, op.record, op.at, listener);
        ctx.stats.portfolioSeeded += 1;
      }
    });
  };

  const enqueue = (items: QueuedRecord[]): void => {
    queue.enqueue(items);
    ctx.stats.queueDepth = queue.depth;
  };

  // Validated in slices: a 10 MB body holds tens of thousands of records.
  const pushAccounts = async (req: RouteRequest): Promise<RouteResponse> => {
    const tenant = tenantOf(req);
    seed(tenant);
    const result = await validateRequestInSlices(req.body, ctx.options.strict ? validateAccountStrict : validateAccount);
    if (!result.ok) return rejected(result.errors);
    // Queued only when the acceptance is answered: a fault injected instead applies nothing.
    return accepted(() => {
      for (const record of result.records) {
        if (record.status === 3) continue;
        const key = pendingKey(tenant, record.debtorCompanyId, record.accountId);
        pendingCreates.set(key, (pendingCreates.get(key) ?? 0) + 1);
      }
      enqueue(result.records.map((record) => ({ kind: 'account', tenant, record })));
    });
  };

  const updateStatus = async (req: RouteRequest): Promise<RouteResponse> => {
    const tenant = tenantOf(req);
    seed(tenant);
    const exists = (debtorCompanyId: string, accountId: string): boolean =>
      portfolio.hasAccount(tenant, debtorCompanyId, accountId) ||
      pendingCreates.has(pendingKey(tenant, debtorCompanyId, accountId));
    const result = await validateRequestInSlices(req.body, statusUpdateValidator(exists));
    if (!result.ok) return rejected(result.errors);
    return accepted(() => enqueue(result.records.map((record) => ({ kind: 'status', tenant, record }))));
  };

  return {
    routes: [
      { method: 'POST', pattern: ACCOUNTS_PATH, auth: 'accounts', handler: pushAccounts },
      { method: 'POST', pattern: UPDATE_STATUS_PATH, auth: 'accounts', handler: updateStatus },
    ],
    seed,
    queueDepth: () => queue.depth,
    drain: () => queue.drain(),
    close: () => {
      queue.close();
      ctx.stats.queueDepth = 0;
    },
  };
}
