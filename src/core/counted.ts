// A count and its noun, in the plural unless the count is 1: the one way progress lines and
// printed results say "1 row", "2 rows".

/** `counted(1, 'page')` is `1 page`; `counted(2, 'page')` is `2 pages`. */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
