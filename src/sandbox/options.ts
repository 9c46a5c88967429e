// Defaults and range checks of SandboxOptions. Every bad value is refused here, at start, with a
// sentence naming the option, so neither the CLI nor the server has to second-guess them later.
import { type DatasetCode, isDatasetCode } from '../core/catalog.ts';
import { unknownOption, type OptionNames } from '../core/option-names.ts';
import type { ResolvedSandboxOptions, SandboxOptions } from './contracts.ts';
import { FaultSpecError, validateFaultRates } from './faults-spec.ts';
import { DEFAULT_SEED } from '../prng.ts';

export { DEFAULT_SEED };

export const DEFAULT_OPTIONS = {
  port: 0,
  host: '127.0.0.1',
  seed: DEFAULT_SEED,
  scale: 1000,
  latencyMs: 0,
  tokenTtlSeconds: 900,
  totalCap: 100_000,
  // Low enough that an unbounded (or as wide) read of a via dataset answers 504 from about scale
  // 10,000, the way the real service's gateway does for its largest; month windows stay under it
  // up to a few hundred thousand rows.
  viaBudget: 10_000,
  churnRate: 0,
  maxBodyBytes: 10 * 1024 * 1024,
  // Four bodies of the largest size at once: a few clients pushing big batches are served, while
  // the memory that parsing them takes stays in the low hundreds of MB.
  maxBufferedBytes: 40 * 1024 * 1024,
  maxConnections: 256,
  // A few seconds, like a real gateway's timeout: a client whose own timeout is shorter learns
  // it here rather than on the real service.
  gatewayTimeoutMs: 3000,
  replicaLagMs: 0,
  strict: false,
} as const;

/** Largest injected latency; beyond it a sandbox looks hung rather than slow. */
export const MAX_LATENCY_MS = 600_000;

/** A sandbox option with a bad value, refused at start with a sentence naming the option. */
export class SandboxOptionsError extends Error {
  override name = 'SandboxOptionsError';
  /** The option the sentence starts with, when it is about one value (`port`, `latencyMs`): the
   * CLI names its flag there instead. */
  readonly option: string | undefined;
  constructor(message: string, options: ErrorOptions & { option?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.option = options.option;
  }
}

function integer(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new SandboxOptionsError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`, { option: name });
  }
  return value;
}

function nonNegative(name: string, value: unknown, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    throw new SandboxOptionsError(`${name} must be a number from 0 to ${max}, got ${JSON.stringify(value)}`, { option: name });
  }
  return value;
}

export function validateLatency(value: unknown): number {
  return integer('latencyMs', value, 0, MAX_LATENCY_MS);
}

export function validateTokenTtl(value: unknown): number {
  // 0 is allowed on purpose: every access token is born expired, which tests the refresh path.
  return integer('tokenTtlSeconds', value, 0, 30 * 24 * 3600);
}

/** The largest seed and scale a sandbox takes (what the flags of the CLI check too). */
export const MAX_SEED = 2 ** 31 - 1;
export const MAX_SCALE = 10_000_000;

const SANDBOX_OPTION_NAMES: OptionNames<SandboxOptions> = {
  port: true, host: true, seed: true, scale: true, latencyMs: true, faults: true, tokenTtlSeconds: true, totalCap: true,
  viaBudget: true, churnRate: true, available: true, gatewayTimeoutMs: true, replicaLagMs: true, strict: true,
  maxBodyBytes: true, maxBufferedBytes: true, maxConnections: true,
};

export function resolveOptions(options: SandboxOptions = {}): ResolvedSandboxOptions {
  const unknown = unknownOption(options, SANDBOX_OPTION_NAMES, 'the sandbox');
  if (unknown !== undefined) throw new SandboxOptionsError(unknown);
  const o = { ...DEFAULT_OPTIONS, ...stripUndefined(options) };
  const host = o.host;
  if (typeof host !== 'string' || host.trim() === '') {
    throw new SandboxOptionsError(`host must be a non-empty address such as 127.0.0.1, got ${JSON.stringify(host)}`, { option: 'host' });
  }
  let faults;
  try {
    faults = validateFaultRates(options.faults ?? {});
  } catch (error) {
    if (error instanceof FaultSpecError) throw new SandboxOptionsError(error.message, { cause: error });
    throw error;
  }
  const available = validateAvailability(options.available ?? {});
  if (typeof o.strict !== 'boolean') throw new SandboxOptionsError(`strict must be true or false, got ${JSON.stringify(o.strict)}`);
  const maxBodyBytes = integer('maxBodyBytes', o.maxBodyBytes, 1024, 1024 * 1024 * 1024);
  return {
    port: integer('port', o.port, 0, 65535),
    host,
    seed: integer('seed', o.seed, 0, MAX_SEED),
    scale: integer('scale', o.scale, 0, MAX_SCALE),
    latencyMs: validateLatency(o.latencyMs),
    tokenTtlSeconds: validateTokenTtl(o.tokenTtlSeconds),
    totalCap: integer('totalCap', o.totalCap, 1, Number.MAX_SAFE_INTEGER),
    viaBudget: integer('viaBudget', o.viaBudget, 1, Number.MAX_SAFE_INTEGER),
    churnRate: nonNegative('churnRate', o.churnRate, 1_000_000),
    maxBodyBytes,
    maxBufferedBytes: bufferedLimit(options.maxBufferedBytes, maxBodyBytes),
    maxConnections: integer('maxConnections', o.maxConnections, 1, 100_000),
    gatewayTimeoutMs: integer('gatewayTimeoutMs', o.gatewayTimeoutMs, 0, MAX_LATENCY_MS),
    replicaLagMs: integer('replicaLagMs', o.replicaLagMs, 0, MAX_LATENCY_MS),
    strict: o.strict,
    faults,
    available,
  };
}

/** Availability overrides (`{ D04: true }`), as the option and POST /__sandbox/availability take them. */
export function validateAvailability(value: unknown): Partial<Record<DatasetCode, boolean>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SandboxOptionsError('available must be an object like {"D04": true}');
  }
  const available: Partial<Record<DatasetCode, boolean>> = {};
  for (const [code, flag] of Object.entries(value)) {
    if (!isDatasetCode(code)) throw new SandboxOptionsError(`available names an unknown dataset code '${code}'`);
    if (typeof flag !== 'boolean') throw new SandboxOptionsError(`available.${code} must be true or false`);
    available[code] = flag;
  }
  return available;
}

/** The default follows a larger maxBodyBytes up; a given value must leave room for one body. */
function bufferedLimit(value: number | undefined, maxBodyBytes: number): number {
  if (value === undefined) return Math.max(DEFAULT_OPTIONS.maxBufferedBytes, maxBodyBytes);
  const max = 16 * 1024 * 1024 * 1024;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < maxBodyBytes || value > max) {
    throw new SandboxOptionsError(
      `maxBufferedBytes must be an integer from ${maxBodyBytes} (the largest request body) to ${max}, got ${JSON.stringify(value)}`,
      { option: 'maxBufferedBytes' },
    );
  }
  return value;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
