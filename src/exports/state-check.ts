// A saved state is checked before a load trusts it. An entry written for another dataset (moved
// by hand, a state key reused) would start this dataset's load from that one's high-water mark,
// skipping rows silently; one edited or torn by hand would fail deep inside the load with a
// JavaScript error. Hand-written rather than a zod schema: exports do not load zod.
import { ConfigError } from '../core/errors.ts';
import type { DatasetState } from './state.ts';

/** Returns the state when it is a well-formed state saved under `key` (a state names the key it
 * was written for: the dataset's code, `S2/D07`, or the caller's stateKey); otherwise a ConfigError
 * says what is wrong with it, and how to start `dataset` afresh. */
export function checkDatasetState(state: unknown, dataset: string, key: string): DatasetState {
  const problem = problemOf(state, key);
  if (problem === undefined) return state as DatasetState;
  throw new ConfigError(
    `The saved state of ${dataset} (key ${JSON.stringify(key)}) ${problem}; remove that entry from the state to load ${dataset} afresh.`,
  );
}

type Check = (value: unknown) => boolean;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isString: Check = (value) => typeof value === 'string';
const isInstant: Check = (value) => typeof value === 'string' && Number.isFinite(Date.parse(value));
const orNull = (check: Check): Check => (value) => value === null || check(value);
const isMark: Check = (value) => isObject(value) && isInstant(value.value) && Array.isArray(value.ids) && value.ids.every(isString);
const isWindow: Check = (value) => isObject(value) && orNull(isInstant)(value.since) && orNull(isInstant)(value.until);
const isPosition: Check = (value) => isObject(value) && isWindow(value.window) && orNull(isString)(value.cursor) && orNull(isMark)(value.last);
const isWindowing: Check = (value) => isObject(value) && (
  value.kind === 'none' || value.kind === 'single' ||
  (value.kind === 'calendar' && (value.unit === 'month' || value.unit === 'week' || value.unit === 'day')) ||
  (value.kind === 'duration' && isString(value.iso))
);
const isProgress: Check = (value) => isObject(value) && Array.isArray(value.done) && value.done.every(isWindow) &&
  Array.isArray(value.open) && value.open.every(isPosition);

/** Each field of an unfinished load, with its check. */
const LOAD_FIELDS: Record<string, Check> = {
  kind: (value) => value === 'initial' || value === 'incremental',
  end: isInstant,
  since: orNull(isInstant),
  until: orNull(isInstant),
  origin: isInstant,
  windowing: isWindowing,
  sort: (value) => value === 'asc' || value === 'desc',
  skip: orNull(isMark),
  position: orNull(isPosition),
  progress: (value) => value === undefined || isProgress(value),
};

function problemOf(state: unknown, key: string): string | undefined {
  if (!isObject(state)) return 'is not an object';
  if (state.dataset !== key) {
    return typeof state.dataset === 'string' ? `was written for ${JSON.stringify(state.dataset)}` : 'names no dataset';
  }
  if (state.version !== 1 && state.version !== 2) return `has version ${JSON.stringify(state.version)}, not 1 or 2`;
  // highWater and load: absent is null (what startLoad makes of them).
  if (state.highWater !== undefined && !orNull(isMark)(state.highWater)) return 'has a highWater that is not {"value": an ISO instant, "ids": [text, …]} or null';
  if (state.load !== null && state.load !== undefined) {
    if (!isObject(state.load)) return 'has a load that is not an object or null';
    for (const [field, check] of Object.entries(LOAD_FIELDS)) {
      if (!check(state.load[field])) return `has an unfinished load whose ${field} is not valid`;
    }
  }
  if (state.completedAt !== undefined && !isInstant(state.completedAt)) return 'has a completedAt that is not an ISO instant';
  if (state.seen !== undefined && !(isObject(state.seen) && Object.values(state.seen).every(isString))) return 'has a seen map that is not {id: cursor value}';
  if (state.fileBytes !== undefined && !(Number.isSafeInteger(state.fileBytes) && (state.fileBytes as number) >= 0)) {
    return 'has a fileBytes that is not a length in bytes';
  }
  return undefined;
}
