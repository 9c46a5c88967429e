// The fault settings language shared by the CLI (`--faults 500=0.1,reset=0.02`), the admin
// endpoint (POST /__sandbox/faults) and tests. One parser, so both doors accept the same things.
import { withField } from '../core/own-fields.ts';
import type { FaultKind } from './contracts.ts';

export const FAULT_KINDS: readonly FaultKind[] = ['429', '500', '503', '504', 'reset'];

export type FaultRates = Partial<Record<FaultKind, number>>;

/** Fault settings that cannot be used (an unknown kind, a rate outside 0..1, rates adding up to more than 1), as `sandbox.setFaults` refuses them. */
export class FaultSpecError extends Error {
  override name = 'FaultSpecError';
}

function isFaultKind(value: string): value is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(value);
}

function checkRate(kind: string, rate: unknown): number {
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate > 1) {
    throw new FaultSpecError(`fault rate of '${kind}' must be a number from 0 to 1, got ${JSON.stringify(rate)}`);
  }
  return rate;
}

/** Validates a rates object (as sent to /__sandbox/faults). The rates are the chances of
 * mutually exclusive outcomes of one request, so together they may not exceed 1. */
export function validateFaultRates(value: unknown): FaultRates {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FaultSpecError('faults must be an object like {"500": 0.1, "reset": 0.02}');
  }
  const rates: FaultRates = {};
  for (const [kind, rate] of Object.entries(value)) {
    if (!isFaultKind(kind)) {
      throw new FaultSpecError(`unknown fault kind '${kind}'; use one of ${FAULT_KINDS.join(', ')}`);
    }
    rates[kind] = checkRate(kind, rate);
  }
  const total = Object.values(rates).reduce((sum, r) => sum + r, 0);
  if (total > 1 + 1e-9) {
    throw new FaultSpecError(`fault rates add up to ${total}; together they may not exceed 1`);
  }
  return rates;
}

/** Parses `500=0.1,reset=0.02` (the --faults format scripts rely on; docs/sandbox.md). An empty string means no faults. */
export function parseFaultSpec(spec: string): FaultRates {
  const rates: Record<string, number> = {};
  for (const part of spec.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const match = /^([^=\s]+)\s*=\s*(\S+)$/.exec(part);
    if (match === null) throw new FaultSpecError(`'${part}' is not KIND=RATE (e.g. 500=0.1,reset=0.02)`);
    const [, kind, rateText] = match as unknown as [string, string, string];
    if (Object.hasOwn(rates, kind)) throw new FaultSpecError(`fault kind '${kind}' is given twice`);
    // Plain decimals only: Number() would also take '0x1' or '1e-0' as rates.
    const rate = /^(\d+(\.\d*)?|\.\d+)$/.test(rateText) ? Number(rateText) : Number.NaN;
    if (Number.isNaN(rate)) throw new FaultSpecError(`fault rate of '${kind}' must be a number from 0 to 1, got '${rateText}'`);
    withField(rates, kind, rate);
  }
  return validateFaultRates(rates);
}

/** The inverse of parseFaultSpec, for notes and help output. */
export function formatFaultSpec(rates: FaultRates): string {
  return FAULT_KINDS.filter((k) => (rates[k] ?? 0) > 0).map((k) => `${k}=${rates[k]}`).join(',');
}
