// Public entry of the sandbox: a faithful, stateful implementation of the service over
// HTTPS, embeddable in-process (`startSandbox`) and served by `lender sandbox`.
import { createAccountsModule } from './accounts/index.ts';
import type { SandboxOptions } from './contracts.ts';
import { createExportsModule } from './exports/index.ts';
import { launchSandbox, type Sandbox } from './launch.ts';

export type { Sandbox, SandboxCredentials } from './launch.ts';
export type {
  FaultKind, FaultSettings, LenderAccount, SandboxOptions, SandboxStats,
} from './contracts.ts';
export { SandboxOptionsError } from './options.ts';
export { FaultSpecError } from './faults-spec.ts';

/**
 * Starts a sandbox, the whole service in-process over HTTPS, on 127.0.0.1 and a free port (by
 * default), and resolves once it listens; log in with `LenderClient.login(sandbox.credentials('demo'))`.
 */
export function startSandbox(options?: SandboxOptions): Promise<Sandbox> {
  return launchSandbox(options, { exports: createExportsModule, accounts: createAccountsModule });
}
