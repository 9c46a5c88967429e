// Option values given as durations or whole numbers, checked one way for the library, the CLI
// and the session alike: a bad value is a ConfigError naming the option (the CLI turns it into a
// usage error, exit 2).
import { Duration, type DurationLikeObject } from 'luxon';
import { ConfigError } from './errors.ts';

/** Milliseconds, an ISO-8601 duration ('PT2M'), a luxon-style object ({minutes: 2}) or 500ms, 90s, 2m, 1h. */
export type DurationValue = number | string | DurationLikeObject;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function shown(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value);
    } catch {
      return String(value);
    }
  }
  return String(value);
}

/** The duration in milliseconds, or NaN when the value is not one. */
function toMillis(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const text = value.trim();
    const short = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
    if (short !== null) return Number(short[1]) * UNIT_MS[short[2] ?? 'ms']!;
    const iso = Duration.fromISO(text);
    return iso.isValid ? iso.toMillis() : Number.NaN;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return Number.NaN;
  try {
    // Also takes a luxon Duration; an unknown unit or a value that is not a number throws.
    const d = Duration.fromDurationLike(value as DurationLikeObject);
    return d.isValid ? d.toMillis() : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Whole milliseconds, at least `min` (default 0: never negative). */
export function parseDuration(value: unknown, name: string, { min = 0 }: { min?: number } = {}): number {
  const ms = Math.round(toMillis(value));
  // A duration, but too short: say the bound, not the form.
  if (ms >= 0 && ms < min) throw new ConfigError(`${name} must be at least ${min} ms, not ${shown(value)}`);
  if (!(ms >= min && ms <= Number.MAX_SAFE_INTEGER)) {
    throw new ConfigError(`${name} must be a duration such as 2m, 90s or 500ms (a bare number is milliseconds), not ${shown(value)}`);
  }
  return ms;
}

/** A whole number (or its decimal digits) within [min, max]; min defaults to 0. */
export function parseInteger(
  value: unknown, name: string, { min = 0, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): number {
  const text = typeof value === 'string' ? value.trim() : undefined;
  const number = text === undefined ? value : /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < min || number > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `a whole number of at least ${min}` : `a whole number from ${min} to ${max}`;
    throw new ConfigError(`${name} must be ${range}, not ${shown(value)}`);
  }
  // -0 from '-0' reads as 0.
  return number + 0;
}

/** A boolean option: undefined takes the default; 'yes', 1 and the like are a mistake, not false. */
export function parseBoolean(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new ConfigError(`${name} must be true or false, not ${shown(value)}`);
  return value;
}
