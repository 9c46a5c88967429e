// The flags of the export commands (`export`, `sync`): windows, page size, instants, dataset codes.
import { isDatasetCode, knownCodesText, PAGE_MAX, type DatasetCode } from '../core/catalog.ts';
import type { ExportOptions } from '../exports/export-stream.ts';
import { resolveWindowing, toMillis, type WindowOption } from '../exports/windows.ts';
import { durationFlag, integerFlag } from './args.ts';
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

/** The reading flags both export commands take (parseArgs definitions). */
export const READING_OPTIONS = {
  window: { type: 'string' },
  limit: { type: 'string' },
  concurrency: { type: 'string' },
  unordered: { type: 'boolean' },
  'min-split': { type: 'string' },
} as const;

/** --window, --limit, --concurrency, --unordered and --min-split, as the export options given. */
export function readingFlags(
  values: { window?: string; limit?: string; concurrency?: string; unordered?: boolean; 'min-split'?: string },
  defaultConcurrency = 1,
): Pick<ExportOptions, 'window' | 'limit' | 'concurrency' | 'ordered' | 'minSplitSpan'> {
  const window = windowFlag(values.window);
  const limit = integerFlag(values.limit, '--limit', { max: PAGE_MAX });
  const concurrency = integerFlag(values.concurrency, '--concurrency', { max: 32 });
  // With one window at a time the pages come in order whatever the flag says: a user who asked
  // for out-of-order delivery wanted the speed of several windows, and is told how to get it.
  if (values.unordered === true && (concurrency ?? defaultConcurrency) < 2) {
    throw new UsageError('--unordered goes with --concurrency 2 or more: one window at a time delivers its pages in order anyway');
  }
  const minSplitSpan = durationFlag(values['min-split'], '--min-split');
  return {
    ...(window !== undefined && { window }),
    ...(limit !== undefined && { limit }),
    ...(concurrency !== undefined && { concurrency }),
    ...(values.unordered === true && { ordered: false }),
    ...(minSplitSpan !== undefined && { minSplitSpan }),
  };
}

/** Help lines of --min-split (the same in both commands). */
export const MIN_SPLIT_HELP = `  --min-split SPAN      a window the service times out on (504) is halved down to this span,
                        then the dataset fails (default PT1H; e.g. PT5M, PT30S)`;

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
    if (!isDatasetCode(code)) throw new UsageError(`unknown ${flag} '${v}'; codes run ${knownCodesText()}; see 'lender catalog'`);
    return code;
  });
}
