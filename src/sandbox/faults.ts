// Injected latency and failures, decided per service request before its handler runs. Faults
// model requests the service never applied, so a client may always retry them safely; the
// admin routes (/__sandbox/*) are never faulted so tests can always observe and reset.
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultKind, FaultSettings, Route, RouteResponse } from './contracts.ts';
import { FAULT_KINDS, validateFaultRates } from './faults-spec.ts';
import { validateLatency, validateTokenTtl } from './options.ts';
import { failure, RETRY_AFTER_SECONDS } from './responses.ts';

/** One draw decides between the kinds (their rates are exclusive outcomes summing to <= 1). */
export function pickFault(rates: FaultSettings['faults'], random: () => number = Math.random): FaultKind | undefined {
  const draw = random();
  let edge = 0;
  for (const kind of FAULT_KINDS) {
    const rate = rates[kind] ?? 0;
    if (rate <= 0) continue;
    edge += rate;
    if (draw < edge) return kind;
  }
  return undefined;
}

export function faultsApply(route: Route | undefined): boolean {
  return route !== undefined && route.auth !== 'admin';
}

/** Resolves after `ms`, or at once when the server shuts down. */
export async function applyLatency(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return;
  await sleep(ms, undefined, { signal }).catch(() => undefined);
}

export function faultResponse(kind: Exclude<FaultKind, 'reset'>, route: Route, requestId: string): RouteResponse {
  // A gateway that rate-limits says when to come back.
  if (kind === '429') return failure(route.auth, 429, requestId, { 'retry-after': String(RETRY_AFTER_SECONDS) });
  return failure(route.auth, Number(kind) as 500 | 503 | 504, requestId);
}

// A plausible success that never completes: the status line and headers promise this many
// bytes, part of them arrive, then the connection dies, as when a proxy or network drops it.
const RESET_BODY = Buffer.from(JSON.stringify({ code: 200, message: 'success', body: { note: 'x'.repeat(200) }, errors: [] }));

export function sendReset(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(RESET_BODY.length) });
  res.write(RESET_BODY.subarray(0, RESET_BODY.length >> 1), () => {
    setImmediate(() => res.socket?.destroy());
  });
}

export class FaultSettingsError extends Error {
  override name = 'FaultSettingsError';
}

const PATCH_KEYS = new Set(['latencyMs', 'faults', 'tokenTtlSeconds']);

/** Applies a POST /__sandbox/faults body to the live settings: given keys replace their value
 * (a `faults` map replaces the whole map, so `{faults:{}}` clears them); nothing changes when
 * any part is invalid. */
export function applyFaultPatch(settings: FaultSettings, patch: unknown): FaultSettings {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw new FaultSettingsError('body must be an object like {"latencyMs":0,"faults":{"500":0.1},"tokenTtlSeconds":900}');
  }
  const p = patch as Record<string, unknown>;
  const unknown = Object.keys(p).filter((k) => !PATCH_KEYS.has(k));
  if (unknown.length > 0) {
    throw new FaultSettingsError(`unknown setting ${unknown.map((k) => `'${k}'`).join(', ')}; use latencyMs, faults, tokenTtlSeconds`);
  }
  try {
    const next: FaultSettings = {
      latencyMs: p.latencyMs === undefined ? settings.latencyMs : validateLatency(p.latencyMs),
      faults: p.faults === undefined ? settings.faults : validateFaultRates(p.faults),
      tokenTtlSeconds: p.tokenTtlSeconds === undefined ? settings.tokenTtlSeconds : validateTokenTtl(p.tokenTtlSeconds),
    };
    Object.assign(settings, next);
    return settings;
  } catch (error) {
    throw new FaultSettingsError((error as Error).message);
  }
}
