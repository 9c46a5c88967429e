// What one POST /__sandbox/advance does to one generated dataset of one tenant: which generated
// rows get a new version and how many rows are inserted. A pure function of (seed, tenant,
// dataset, call number), so the same seed gives the same changes, and a dataset first read after
// several advances can replay them and end up exactly where an eagerly built one would be.
import { Rng } from '../../prng.ts';
import { mix } from './row-hash.ts';

export interface AdvancePlan {
  /** Ordinals (0-based, into the generated own rows) of the rows to update, distinct. */
  readonly updates: readonly number[];
  readonly inserts: number;
}

export interface AdvanceTarget {
  readonly seed: number;
  readonly scale: number;
  readonly tenantIndex: number;
  readonly datasetNumber: number;
  /** Generated own rows of the dataset. */
  readonly ownRows: number;
  /** Whether rows are ever updated: logs (cursor created_at / communicated_at) only grow. */
  readonly updatable: boolean;
}

export function advancePlan(target: AdvanceTarget, call: number): AdvancePlan {
  const rng = new Rng(mix(target.seed, target.tenantIndex, target.datasetNumber, call, 0xadd));
  const updateCount = target.updatable ? Math.min(target.ownRows, clamp(Math.ceil(target.scale / 100), 1, 100)) : 0;
  return {
    updates: sampleDistinct(rng, target.ownRows, updateCount),
    inserts: clamp(Math.ceil(target.scale / 200), 1, 50),
  };
}

function clamp(value: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, value));
}

/** `count` distinct integers of [0, n) (Floyd's algorithm: `count` draws, no retries). */
export function sampleDistinct(rng: Rng, n: number, count: number): number[] {
  const chosen = new Set<number>();
  for (let j = n - count; j < n; j++) {
    const t = rng.int(0, j);
    chosen.add(chosen.has(t) ? j : t);
  }
  return [...chosen];
}
