// Argument parsing shared by every sub-command: node:util parseArgs in strict mode with its
// errors as UsageError (exit 2), and the flag-value checks several commands need.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { isDatasetCode, type DatasetCode } from '../core/catalog.ts';
import { ConfigError } from '../core/errors.ts';
import type { ExportOptions } from '../exports/export-stream.ts';
import { resolveWindowing, toMillis, type WindowOption } from '../exports/windows.ts';
import { parseDuration, parseInteger } from '../core/options.ts';
import { UsageError } from './command.ts';

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options, P extends boolean> =
  ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: P }>>;

/** Strict parseArgs: an unknown flag or a missing value is a usage error, not a stack trace. */
export function parseCommandArgs<const O extends Options, const P extends boolean = false>(
  argv: string[], options: O, allowPositionals?: P,
): Parsed<O, P> {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: (allowPositionals ?? false) as P });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The options module's check of a flag's value, refused as a usage error (exit 2). */
function checked<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/** A whole number within [min, max] (min 1 unless given); undefined when the flag was not given. */
export function integerFlag(
  value: string | undefined, flag: string, { min = 1, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): number | undefined {
  if (value === undefined) return undefined;
  return checked(() => parseInteger(value, flag, { min, max }));
}

/** Milliseconds, at least 1: 2m, 90s, 1.5h, 500ms, a bare number of ms (or an ISO duration);
 * undefined when the flag was not given. */
export function durationFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  return checked(() => parseDuration(value, flag, { min: 1 }));
}

/** A finite decimal number (e.g. a rate); undefined when the flag was not given. */
export function numberFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === '' || !/^[\d.eE+-]+$/.test(value.trim()) || !Number.isFinite(number)) {
    throw new UsageError(`${flag} must be a number, not '${value}'`);
  }
  return number;
}

/** Whether to show progress on stderr: with --progress, or whenever stderr is a terminal. */
export function progressFlag(value: boolean | undefined, stderr: NodeJS.WritableStream): boolean {
  return value === true || (stderr as { isTTY?: boolean }).isTTY === true;
}

function windowFlag(value: string | undefined): WindowOption | undefined {
  if (value === undefined) return undefined;
  try {
    resolveWindowing(value, 'via');
  } catch {
    throw new UsageError(`--window must be auto, none, month, week, day or an ISO duration such as P10D, not '${value}'`);
  }
  return value;
}

/** --window, --limit and --concurrency of the export commands, as the export options given. */
export function readingFlags(values: { window?: string; limit?: string; concurrency?: string }): Pick<ExportOptions, 'window' | 'limit' | 'concurrency'> {
  const window = windowFlag(values.window);
  const limit = integerFlag(values.limit, '--limit', { max: 1000 });
  const concurrency = integerFlag(values.concurrency, '--concurrency', { max: 32 });
  return {
    ...(window !== undefined && { window }),
    ...(limit !== undefined && { limit }),
    ...(concurrency !== undefined && { concurrency }),
  };
}

export function instantFlag(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  try {
    toMillis(value);
  } catch {
    throw new UsageError(`${flag} must be an ISO-8601 timestamp such as 2026-01-01T00:00:00Z, not '${value}'`);
  }
  return value;
}

export function datasetCodes(values: readonly string[], flag = 'dataset'): DatasetCode[] {
  return values.map((v) => {
    const code = v.trim().toUpperCase();
    if (!isDatasetCode(code)) throw new UsageError(`unknown ${flag} '${v}'; codes run D01 to D26 (see 'lender catalog')`);
    return code;
  });
}
