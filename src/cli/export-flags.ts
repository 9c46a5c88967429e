// The flags of the export commands (`export`, `sync`): windows, page size, instants, dataset codes.
import { isDatasetCode, type DatasetCode } from '../core/catalog.ts';
import type { ExportOptions } from '../exports/export-stream.ts';
import { resolveWindowing, toMillis, type WindowOption } from '../exports/windows.ts';
import { integerFlag } from './args.ts';
import { UsageError } from './command.ts';

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
