// Builds the SandboxContext every part of the sandbox shares: tenants, live fault knobs,
// counters and the clock.
import { createHash, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DATA_SPAN, type ResolvedSandboxOptions, type SandboxContext, type SandboxStats, type Tenant } from './contracts.ts';

/** The lenders every sandbox serves; `demo` is the default of the CLI, REPL and notebooks. */
export const TENANT_NAMES = ['demo', 'other'] as const;

/** A UUID (version-4 layout) that depends only on the seed and the lender, so the same seed
 * gives the same lenderPublicIds and generated rows can be compared across sandboxes. */
export function tenantPublicId(seed: number, lender: string): string {
  const bytes = createHash('sha256').update(`lender-streams/tenant/${seed}/${lender}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// Passwords are random per start rather than derived from the seed: the seed is public
// (it is in commands and docs), and a credential anyone can compute is no credential.
function newPassword(): string {
  return randomBytes(18).toString('base64url');
}

export function createTenants(seed: number): Tenant[] {
  return TENANT_NAMES.map((lender, index) => ({
    lender,
    index,
    email: `api@${lender}.sandbox.lender.test`,
    password: newPassword(),
    lenderPublicId: tenantPublicId(seed, lender),
  }));
}

export function initialStats(): SandboxStats {
  return { logins: 0, refreshes: 0, requests: 0, accountsProcessed: 0, queueDepth: 0, faultsInjected: 0 };
}

/** A clock that never goes backwards (performance.now() is monotonic where Date.now() is not)
 * and never reads earlier than DATA_SPAN.end, so writes after start always sort after the
 * seeded data even on a machine whose clock is behind. */
export function monotonicClock(floor: string = DATA_SPAN.end): () => Date {
  const origin = Math.max(Date.now(), Date.parse(floor));
  const started = performance.now();
  let last = 0;
  return () => {
    last = Math.max(last, origin + Math.floor(performance.now() - started));
    return new Date(last);
  };
}

export function createContext(options: ResolvedSandboxOptions): SandboxContext {
  const tenants = createTenants(options.seed);
  const byPublicId = new Map(tenants.map((t) => [t.lenderPublicId, t]));
  return {
    options,
    tenants,
    tenantByPublicId: (id) => byPublicId.get(id),
    faults: { latencyMs: options.latencyMs, faults: { ...options.faults }, tokenTtlSeconds: options.tokenTtlSeconds },
    availability: { ...options.available },
    stats: initialStats(),
    now: monotonicClock(),
  };
}
