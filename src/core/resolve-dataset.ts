// Addressing a dataset by its code alone: 'D07' => S2/D07, from the static catalog. An explicit
// {section, dataset} passes through untouched when it has the shape of codes, so the service
// stays the judge of new codes.
import { UnknownDatasetError } from './errors.ts';
import type { DatasetRef } from './types.ts';
import { datasetInfo, isCodeShaped, knownCodesText } from './catalog.ts';

export interface DatasetAddress {
  section: string;
  dataset: string;
}

export function resolveDataset(ref: DatasetRef | string): DatasetAddress {
  // Nothing, or a number: a call from JavaScript (the REPL) that forgot the argument.
  if (typeof ref !== 'string' && (typeof ref !== 'object' || ref === null)) {
    throw new UnknownDatasetError(`A dataset is named by its code, such as 'D07', or by { section: 'S2', dataset: 'D07' }; got ${String(ref)}.`);
  }
  if (typeof ref !== 'string') {
    if (!isCodeShaped(ref.section) || !isCodeShaped(ref.dataset)) {
      throw new UnknownDatasetError(
        `A dataset is named by codes such as { section: 'S2', dataset: 'D07' } (an upper-case letter, then letters and digits); got ${JSON.stringify({ section: ref.section, dataset: ref.dataset }).slice(0, 120)}.`,
      );
    }
    return { section: ref.section, dataset: ref.dataset };
  }
  const code = ref.trim().toUpperCase();
  const info = datasetInfo(code);
  if (info === undefined) {
    throw new UnknownDatasetError(
      `Dataset '${ref}' is not in the catalog; known codes are ${knownCodesText()}, see 'lender catalog'.`,
    );
  }
  return { section: info.section, dataset: info.code };
}
