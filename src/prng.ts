// The one seeded random number generator of the project: the sandbox's data, the demo's sample
// portfolio and the tests' own random choices must be reproducible from a seed on every start and
// every Node version, which Math.random cannot be.

/** The seed of the sandbox's data (and so of the demo and the REPL's embedded sandbox) unless
 * one is given. Here, at the bottom, so the CLI can name it without loading the sandbox. */
export const DEFAULT_SEED = 42;

/** mulberry32: small, fast and good enough for plausible fake data. */
export class Rng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(values: readonly T[]): T {
    if (values.length === 0) throw new RangeError('pick from an empty list');
    return values[Math.floor(this.next() * values.length)]!;
  }

  /** Picks by weight: pickWeighted([['a', 3], ['b', 1]]) gives 'a' three times as often. */
  pickWeighted<T>(choices: readonly (readonly [T, number])[]): T {
    const sum = choices.reduce((s, [, w]) => s + w, 0);
    let roll = this.next() * sum;
    for (const [value, weight] of choices) {
      roll -= weight;
      if (roll < 0) return value;
    }
    return choices[choices.length - 1]![0];
  }

  digits(count: number): string {
    let out = '';
    for (let i = 0; i < count; i++) out += String(this.int(0, 9));
    return out;
  }
}
