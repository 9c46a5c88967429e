// Writes during a walk: a timer that keeps updating and inserting rows of the
// generated datasets at `rate` rows per second while clients page, so the client's no-skip
// handling meets the real thing. It writes only to tables already built (the ones being read);
// it is timing-dependent by nature, unlike advance().
import { performance } from 'node:perf_hooks';
import type { GeneratedTable } from './generated-table.ts';
import { Rng } from '../../prng.ts';
import { mix } from './row-hash.ts';

const TICK_MS = 50;

/** One churn write: a new version of a random generated row (moving it to `ms`), or a new row. */
export function churnWrite(tables: readonly GeneratedTable[], rng: Rng, ms: number): void {
  if (tables.length === 0) return;
  const table = rng.pick(tables);
  if (table.updatable && table.ownBaseCount > 0 && rng.chance(0.6)) table.update(rng.int(0, table.ownBaseCount - 1), ms);
  else table.insert(ms);
}

export class Churn {
  readonly #tables: () => readonly GeneratedTable[];
  readonly #now: () => number;
  readonly #rng: Rng;
  #rate = 0;
  #owed = 0;
  #last = 0;
  #timer: NodeJS.Timeout | undefined;
  #written = 0;

  constructor(seed: number, tables: () => readonly GeneratedTable[], now: () => number) {
    this.#tables = tables;
    this.#now = now;
    this.#rng = new Rng(mix(seed, 0xc4a2));
  }

  get rate(): number {
    return this.#rate;
  }

  /** Rows written since start. */
  get written(): number {
    return this.#written;
  }

  /** Rows per second; 0 stops. */
  setRate(rate: number): void {
    this.#rate = rate;
    if (rate > 0 && this.#timer === undefined) {
      this.#last = performance.now();
      this.#owed = 0;
      // unref: a churning sandbox must not keep a finished test or script alive.
      this.#timer = setInterval(() => this.#tick(), TICK_MS).unref();
    } else if (rate <= 0) {
      this.close();
    }
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    const now = performance.now();
    this.#owed += (this.#rate * (now - this.#last)) / 1000;
    this.#last = now;
    const count = Math.floor(this.#owed);
    if (count === 0) return;
    this.#owed -= count;
    const tables = this.#tables();
    const ms = this.#now();
    for (let i = 0; i < count; i++) churnWrite(tables, this.#rng, ms);
    this.#written += count;
  }
}
