// Internal contracts between the sandbox's parts: the HTTPS server and router (server.ts,
// router.ts), the accounts half (accounts/) and the export half (exports/). Each part owns its
// files; they meet only through these types.
import type { IncomingHttpHeaders } from 'node:http';
import type { DatasetCode } from '../core/catalog.ts';

/** Who a route is for, which decides how a bad token is answered (the service's documented error shapes). */
export type RouteAuth =
  | 'none' // login, refresh
  | 'accounts' // 401 { error: 'Unauthorized' }
  | 'export' // 401/403 { success: false, message, requestId }
  | 'admin'; // /__sandbox/*: no token, never faulted

export interface RouteRequest {
  readonly method: string;
  readonly url: URL;
  /** Path parameters named in the route pattern (":lenderPublicId" -> params.lenderPublicId). */
  readonly params: Readonly<Record<string, string>>;
  readonly headers: IncomingHttpHeaders;
  /** Parsed JSON body; undefined when there was no body. Malformed JSON never reaches a handler. */
  readonly body: unknown;
  readonly requestId: string;
  /** The tenant resolved from the access token (auth 'accounts' | 'export'), path already checked. */
  readonly tenant?: Tenant;
}

export interface RouteResponse {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Answer only after this many milliseconds (a gateway that gives up after its timeout). */
  readonly delayMs?: number;
  /** The request's effect (queueing accepted records), run only when the answer is sent as is:
   * a fault injected instead of this answer leaves the service unchanged. */
  readonly commit?: () => void;
}

export interface Route {
  readonly method: 'GET' | 'POST';
  /** e.g. '/admin/v3/lenders/:lenderPublicId/accounts'; segments starting with ':' are params. */
  readonly pattern: string;
  readonly auth: RouteAuth;
  readonly handler: (req: RouteRequest) => RouteResponse | Promise<RouteResponse>;
}

/** A lender the sandbox serves, with the login of its user (`sandbox.lenders`). */
export interface LenderAccount {
  /** The {lender} path segment (subdomain) issued at onboarding. */
  readonly lender: string;
  readonly email: string;
  readonly password: string;
  readonly lenderPublicId: string;
}

/** One lender of the sandbox with its own data store (layer one of tenant isolation). */
export interface Tenant extends LenderAccount {
  /** Small integer used by generators so each tenant's data differs deterministically. */
  readonly index: number;
}

/** Mutable knobs that the CLI flags set at start and POST /__sandbox/faults changes live. */
export interface FaultSettings {
  latencyMs: number;
  /** Probability per request (0..1) of each fault kind. */
  faults: Partial<Record<FaultKind, number>>;
  tokenTtlSeconds: number;
}
/** A fault the sandbox can inject into a request: a 500, 503 or 504 answer, or a connection reset mid-response. */
export type FaultKind = '429' | '500' | '503' | '504' | 'reset';

/** Options of `startSandbox`: address, seed and scale of the generated data, latency, faults, limits and dataset availability. */
export interface SandboxOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** Seed of every generated value; same seed and scale give byte-identical data. Default DEFAULT_SEED (src/prng.ts). */
  seed?: number;
  /** Rows per generated dataset (D26: at most 200), and sub-accounts in the seeded portfolio (at most
   * 20,000), from which D01, D02, D03 and D05 derive their rows. Default 1000. */
  scale?: number;
  latencyMs?: number;
  faults?: Partial<Record<FaultKind, number>>;
  /** Access-token lifetime in seconds. Default 900. */
  tokenTtlSeconds?: number;
  /** Cap of includeTotal counts; above it total is a lower bound ('capped'). Default 100000. */
  totalCap?: number;
  /** The gateway's budget: rows a read of a via dataset may have to scan, from its cursor to the
   * end of its window (every lender's candidates), before it answers 504. Default 10000. */
  viaBudget?: number;
  /** Rows per second inserted/updated while clients page ("writes during a walk"). Default 0. */
  churnRate?: number;
  /** Overrides of catalog availability, e.g. { D04: true } as datasets ship; `setAvailability`
   * and POST /__sandbox/availability change it while clients run. */
  available?: Partial<Record<DatasetCode, boolean>>;
  /** Milliseconds a read over the gateway's row budget (viaBudget) waits before its 504, as a
   * real gateway answers only after its timeout. 0 answers at once. Default 3000. */
  gatewayTimeoutMs?: number;
  /** Milliseconds before an accepted account or flag shows in the export: pages are read from a
   * replica (`meta.readFrom: 'secondary'`) that applies writes this late. Default 0 (primary). */
  replicaLagMs?: number;
  /** Refuses what the service may refuse: a body that is not `Content-Type: application/json`,
   * export query values outside the documented ones, an edited cursor, and account records
   * without the machine-readable schema's required fields. Default false. */
  strict?: boolean;
  /** Largest accepted request body in bytes. Default 10 MiB. */
  maxBodyBytes?: number;
  /** Request-body bytes held by all requests at once; past it bodies are answered 503 with
   * Retry-After. Default 40 MiB, and never less than maxBodyBytes. */
  maxBufferedBytes?: number;
  /** Connections served at once; a connection beyond them is answered 503 with Retry-After and
   * closed. Default 256. */
  maxConnections?: number;
}

/** Counters of GET /__sandbox/stats (contract: at least these keys). */
export interface SandboxStats {
  logins: number;
  refreshes: number;
  requests: number;
  accountsProcessed: number;
  queueDepth: number;
  faultsInjected: number;
  [key: string]: number;
}

// ---- Accounts state, shared between accounts/ (which owns it) and exports/ (which serves it
// as D01, D02, D03 and D05). Timestamps are ISO-8601 UTC strings with milliseconds.

export interface DebtorRecord {
  /** Internal record identifier; D01 public_id is its string form. */
  readonly id: number;
  readonly debtorCompanyId: string;
  readonly firstName: string;
  readonly lastName?: string;
  readonly language?: string;
  readonly idNumber?: string;
  readonly passportNumber?: string;
  /** dd/MM/yyyy as pushed. */
  readonly birthDate?: string;
  readonly gender?: string;
  readonly nationality?: string;
  readonly phones: readonly { number: string; type?: string }[];
  readonly emails: readonly { email: string; type?: string }[];
  readonly addresses: readonly Record<string, string>[];
  readonly doNotContact: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface AccountRecord {
  readonly id: number;
  readonly debtorCompanyId: string;
  readonly accountId: string;
  readonly loanType?: number;
  readonly merchant?: string;
  /** Sum of balances of the non-withdrawn sub-accounts, as a decimal string. */
  readonly outstandingBalance: string;
  readonly subAccountCount: number;
  readonly activeSubAccountCount: number;
  /** Aggregate status; the service does not name the states, these are the sandbox's. */
  readonly status: 'active' | 'settled' | 'withdrawn';
  readonly disputed: boolean;
  readonly doNotContact: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface SubAccountRecord {
  readonly id: number;
  readonly debtorCompanyId: string;
  readonly accountId: string;
  readonly subAccountId: string;
  readonly principal: string;
  readonly interest?: string;
  readonly fees?: string;
  readonly paidAmount?: string;
  readonly paidDate?: string;
  readonly dateDue?: string;
  /** principal - paidAmount (the service's balance rule), decimal string. */
  readonly balance: string;
  readonly status: 'active' | 'withdrawn';
  readonly loanType?: number;
  readonly merchant?: string;
  readonly additionalData?: Readonly<Record<string, unknown>>;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export type AccountEventType = 'created' | 'updated' | 'withdrawn' | 'disputed' | 'do_not_contact';

export interface AccountEventRecord {
  readonly id: number;
  readonly debtorCompanyId: string;
  readonly accountId: string;
  readonly subAccountId?: string;
  readonly type: AccountEventType;
  readonly createdAt: string;
}

/** Called by accounts/ after every applied change, synchronously, in processing order. */
export interface PortfolioListener {
  debtor(tenant: Tenant, record: DebtorRecord): void;
  account(tenant: Tenant, record: AccountRecord): void;
  subAccount(tenant: Tenant, record: SubAccountRecord): void;
  event(tenant: Tenant, record: AccountEventRecord): void;
  /** Runs `apply`, which writes a tenant's seeded portfolio through this listener: those writes
   * reach the export at once, never behind a replica lag, as if written before the sandbox served. */
  seeding(apply: () => void): void;
}

// ---- How the server composes its parts.

/** Generated and seeded data lies in this span so the same seed gives the same timestamps on
 * every start. Writes after start (pushes, advance, churn) are stamped by ctx.now(). */
export const DATA_SPAN = { start: '2025-01-01T00:00:00.000Z', end: '2026-10-01T00:00:00.000Z' } as const;

export type ResolvedSandboxOptions = Required<Omit<SandboxOptions, 'faults' | 'available'>> & {
  faults: Partial<Record<FaultKind, number>>;
  available: Partial<Record<DatasetCode, boolean>>;
};

export interface SandboxContext {
  readonly options: ResolvedSandboxOptions;
  readonly tenants: readonly Tenant[];
  tenantByPublicId(lenderPublicId: string): Tenant | undefined;
  /** Live fault settings (changed by POST /__sandbox/faults). */
  readonly faults: FaultSettings;
  /** Live catalog availability overrides (changed by POST /__sandbox/availability). */
  readonly availability: Partial<Record<DatasetCode, boolean>>;
  /** Counters behind /__sandbox/stats; modules increment their own keys. */
  readonly stats: SandboxStats;
  /** Monotonic wall clock: never earlier than the DATA_SPAN end nor than a previous call. */
  now(): Date;
}

export interface SandboxModule {
  readonly routes: readonly Route[];
  /** Runs once before the server listens (the exports half starts churn there). */
  start?(): void | Promise<void>;
  /** Runs once the server listens, after every module's start(). */
  serving?(): void;
  /** Stops timers; called by Sandbox.close(). */
  close?(): void;
}

/** accounts/index.ts: createAccountsModule(ctx, listener). */
export interface AccountsModule extends SandboxModule {
  /** Applies the tenant's seeded portfolio, once: called before anything reads or writes the
   * tenant's accounts state (its own routes do it; the export's D01, D02, D03 and D05 reads and
   * the stats call it). */
  seed(tenant: Tenant): void;
  /** Records accepted by the endpoints and not yet applied. */
  queueDepth(): number;
  /** Resolves once the background queue is empty. */
  drain(): Promise<void>;
}

/** exports/index.ts: createExportsModule(ctx, seedPortfolio), where seedPortfolio is the accounts
 * half's seed(), called before a read of D01, D02, D03 or D05. Its routes include POST
 * /__sandbox/advance and POST /__sandbox/churn (auth 'admin'). */
export interface ExportsModule extends SandboxModule {
  /** Feeds D01, D02, D03 and D05 from the accounts state. */
  readonly listener: PortfolioListener;
  /** Deterministically updates some rows (cursor field moves forward) and inserts new ones. */
  advance(): { updated: number; inserted: number };
}
