// Assembles a running sandbox from its parts: options, context, certificate, the accounts and
// exports modules, the auth and admin routes, and the HTTPS server. The modules come in as
// factories so this wiring can be exercised on its own.
import { rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import type { DatasetCode } from '../core/catalog.ts';
import type {
  AccountsModule, ExportsModule, FaultSettings, LenderAccount, PortfolioListener, SandboxContext,
  SandboxOptions, SandboxStats, Tenant,
} from './contracts.ts';
import { createAdminRoutes } from './admin-routes.ts';
import { authInvalidBody, createAuthRoutes } from './auth-routes.ts';
import { createContext } from './context.ts';
import { applyFaultPatch } from './faults.ts';
import { resolveOptions, validateAvailability } from './options.ts';
import { Router } from './router.ts';
import { SandboxServer } from './server.ts';
import { generateTls } from './tls.ts';
import { TokenIssuer } from './tokens.ts';

/** What a client needs to log in, in the shape LenderClient.login takes. */
export interface SandboxCredentials {
  readonly authUrl: string;
  readonly lender: string;
  readonly email: string;
  readonly password: string;
  /** PEM of the sandbox's certificate, to trust as a CA. */
  readonly ca: string;
}

/** A running sandbox: its URLs and CA, login credentials for its lenders, admin controls (stats, drain, faults, advance) and `close()`. */
export interface Sandbox {
  readonly host: string;
  readonly port: number;
  /** https://HOST:PORT, the service root (`{auth_url}`). */
  readonly authUrl: string;
  /** authUrl + '/admin/v3', the `{base_url}` of the account and export endpoints. */
  readonly baseUrl: string;
  readonly ca: string;
  /** The CA PEM on disk (a fresh temp folder), for tools such as `curl --cacert`; removed by close(). */
  readonly caFile: string;
  /** At least `demo` and `other`. */
  readonly lenders: readonly LenderAccount[];
  credentials(lender?: string): SandboxCredentials;
  stats(): SandboxStats;
  /** Resolves once the accounts background queue is empty. */
  drain(): Promise<void>;
  /** Changes latency, fault rates or token lifetime live; a `faults` map replaces the old one. */
  setFaults(patch: Partial<FaultSettings>): FaultSettings;
  /** Updates some export rows and inserts new ones (deterministic per seed). */
  advance(): { updated: number; inserted: number };
  /** Sets catalog availability while clients run (`{ D04: true }`); the catalog and the fetch's
   * 404 follow at once. Returns every override now in force. */
  setAvailability(patch: Partial<Record<DatasetCode, boolean>>): Partial<Record<DatasetCode, boolean>>;
  close(): Promise<void>;
  /** Secret-free summary: authUrl and lenders without their passwords. */
  toJSON(): { authUrl: string; baseUrl: string; lenders: { lender: string; lenderPublicId: string }[] };
  [inspect.custom](): string;
}

export interface ModuleFactories {
  exports(ctx: SandboxContext, seedPortfolio: (tenant: Tenant) => void): ExportsModule;
  accounts(ctx: SandboxContext, listener: PortfolioListener): AccountsModule;
}

/** A URL host for a bind address; wildcard binds are reached over loopback. */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function reportHandlerError(error: unknown, where: string): void {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`lender sandbox: unexpected error in ${where}: ${message}\n`);
}

/** The CA folders of this process's sandboxes not closed yet. A process that ends without
 * close() (a script's process.exit, an uncaught error) still removes them, so no folder is left
 * in the temporary directory. A process killed by a signal cannot. */
const openCaDirs = new Set<string>();
let removingAtExit = false;

function removeAtExit(dir: string): void {
  openCaDirs.add(dir);
  if (removingAtExit) return;
  removingAtExit = true;
  process.once('exit', () => {
    for (const open of openCaDirs) rmSync(open, { recursive: true, force: true });
  });
}

export async function launchSandbox(options: SandboxOptions | undefined, factories: ModuleFactories): Promise<Sandbox> {
  const resolved = resolveOptions(options);
  const ctx = createContext(resolved);
  const tls = await generateTls(resolved.host);
  const tokens = new TokenIssuer(() => ctx.faults.tokenTtlSeconds);

  // Each tenant's seeded portfolio is applied when first needed (accounts/index.ts); a read of
  // D01, D02, D03 or D05 needs it too. `accountsModule` is made next, before any request.
  const exportsModule = factories.exports(ctx, (tenant) => accountsModule.seed(tenant));
  const accountsModule = factories.accounts(ctx, exportsModule.listener);
  // `server` is made below; stats are only read once it exists. They count the seeded portfolio
  // as a sandbox that seeded at start would.
  const stats = (): SandboxStats => {
    for (const tenant of ctx.tenants) accountsModule.seed(tenant);
    return { ...ctx.stats, queueDepth: accountsModule.queueDepth(), ...server.load() };
  };
  const setFaults = (patch: unknown): FaultSettings => {
    const live = applyFaultPatch(ctx.faults, patch);
    return { latencyMs: live.latencyMs, faults: { ...live.faults }, tokenTtlSeconds: live.tokenTtlSeconds };
  };

  const setAvailability = (patch: unknown): Partial<Record<DatasetCode, boolean>> => {
    Object.assign(ctx.availability, validateAvailability(patch));
    return { ...ctx.availability };
  };

  const router = new Router([
    ...createAuthRoutes(ctx, tokens),
    ...createAdminRoutes({ stats, drain: () => accountsModule.drain(), setFaults, setAvailability }),
    ...exportsModule.routes,
    ...accountsModule.routes,
  ]);
  const server = new SandboxServer({ ctx, router, tokens, tls, invalidBody: authInvalidBody, onHandlerError: reportHandlerError });

  let caDir: string | undefined;
  const shutdown = async (): Promise<void> => {
    accountsModule.close?.();
    exportsModule.close?.();
    await server.close();
    if (caDir !== undefined) {
      openCaDirs.delete(caDir);
      await rm(caDir, { recursive: true, force: true });
    }
  };

  let address;
  try {
    await exportsModule.start?.();
    await accountsModule.start?.();
    address = await server.listen(resolved.port, resolved.host);
    exportsModule.serving?.();
    accountsModule.serving?.();
    caDir = await mkdtemp(join(tmpdir(), 'lender-sandbox-'));
    removeAtExit(caDir);
    await writeFile(join(caDir, 'ca.pem'), tls.cert, { mode: 0o644 });
  } catch (error) {
    await shutdown().catch(() => undefined);
    throw error;
  }

  const authUrl = `https://${urlHost(resolved.host)}:${address.port}`;
  const baseUrl = `${authUrl}/admin/v3`;
  const lenders: LenderAccount[] = ctx.tenants.map(({ lender, email, password, lenderPublicId }) => ({ lender, email, password, lenderPublicId }));
  let closing: Promise<void> | undefined;

  return {
    host: resolved.host,
    port: address.port,
    authUrl,
    baseUrl,
    ca: tls.cert,
    caFile: join(caDir, 'ca.pem'),
    lenders,
    credentials(lender = 'demo') {
      const account = lenders.find((l) => l.lender === lender);
      if (account === undefined) {
        throw new Error(`the sandbox has no lender '${lender}'; it has ${lenders.map((l) => l.lender).join(', ')}`);
      }
      return { authUrl, lender: account.lender, email: account.email, password: account.password, ca: tls.cert };
    },
    stats,
    drain: () => accountsModule.drain(),
    setFaults,
    advance: () => exportsModule.advance(),
    setAvailability,
    close() {
      closing ??= shutdown();
      return closing;
    },
    // Printing the sandbox (REPL, notebooks, logs) must not show the lenders' passwords.
    [inspect.custom]() {
      return `Sandbox { authUrl: '${authUrl}', lenders: [${lenders.map((l) => `'${l.lender}'`).join(', ')}] }`;
    },
    toJSON() {
      return { authUrl, baseUrl, lenders: lenders.map((l) => ({ lender: l.lender, lenderPublicId: l.lenderPublicId })) };
    },
  };
}
