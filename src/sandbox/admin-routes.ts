// The sandbox's own endpoints under /__sandbox/ (a contract scripts rely on; docs/sandbox.md): no token, never faulted.
import type { FaultSettings, Route, SandboxStats } from './contracts.ts';
import { FaultSettingsError } from './faults.ts';
import { SandboxOptionsError } from './options.ts';
import { json } from './responses.ts';
import type { DatasetCode } from '../core/catalog.ts';

export interface AdminHooks {
  stats(): SandboxStats;
  drain(): Promise<void>;
  /** Throws FaultSettingsError for an invalid body, changing nothing. */
  setFaults(patch: unknown): FaultSettings;
  /** Throws SandboxOptionsError for an invalid body, changing nothing. */
  setAvailability(patch: unknown): Partial<Record<DatasetCode, boolean>>;
}

export function createAdminRoutes(hooks: AdminHooks): Route[] {
  return [
    { method: 'GET', pattern: '/__sandbox/stats', auth: 'admin', handler: () => json(200, hooks.stats()) },
    {
      method: 'POST',
      pattern: '/__sandbox/drain',
      auth: 'admin',
      handler: async () => {
        await hooks.drain();
        return json(200, { drained: true, stats: hooks.stats() });
      },
    },
    {
      method: 'POST',
      pattern: '/__sandbox/faults',
      auth: 'admin',
      handler: (req) => {
        try {
          return json(200, hooks.setFaults(req.body === undefined ? {} : req.body));
        } catch (error) {
          if (error instanceof FaultSettingsError) return json(400, { error: error.message });
          throw error;
        }
      },
    },
    {
      method: 'POST',
      pattern: '/__sandbox/availability',
      auth: 'admin',
      handler: (req) => {
        try {
          return json(200, { available: hooks.setAvailability(req.body === undefined ? {} : req.body) });
        } catch (error) {
          if (error instanceof SandboxOptionsError) return json(400, { error: error.message });
          throw error;
        }
      },
    },
  ];
}
