// Figures shared by the benches.

/** The middle value (the upper one of the two middles for an even count). */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
