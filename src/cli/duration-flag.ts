// Durations on the command line: 2m, 90s, 1.5h, 500ms, or a bare number of milliseconds.
import { UsageError } from './command.ts';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds (at least 1); undefined when the flag was not given. */
export function durationFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  const ms = match === null ? Number.NaN : Math.round(Number(match[1]) * UNIT_MS[match[2] ?? 'ms']!);
  if (!(ms >= 1 && ms <= Number.MAX_SAFE_INTEGER)) {
    throw new UsageError(`${flag} must be a duration such as 2m, 90s or 500ms (a bare number is milliseconds), not '${value}'`);
  }
  return ms;
}
