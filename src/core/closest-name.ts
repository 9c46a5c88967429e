// "Did you mean --since?": the known flag, command or option closest to a mistyped one, if any is close
// enough to be a likely typo rather than a different word.

/** Edit distance counting a swap of two neighbouring letters as one edit (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known name `typed` most likely meant: the nearest within 1 edit for short names, 2 for longer
 * ones (`--sinse` → `--since`, `exprot` → `export`), else the only name that starts with it
 * (`--conc` → `--concurrency`). Leading dashes and case are not compared.
 */
export function closestName(typed: string, known: readonly string[]): string | undefined {
  const name = typed.replace(/^-+/, '').toLowerCase();
  if (name === '') return undefined;
  const allowed = name.length <= 4 ? 1 : 2;
  let best: { flag: string; distance: number } | undefined;
  for (const flag of known) {
    const distance = editDistance(name, flag.replace(/^-+/, '').toLowerCase());
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { flag, distance };
  }
  if (best !== undefined) return best.flag;
  const prefixed = name.length >= 3 ? known.filter((flag) => flag.replace(/^-+/, '').toLowerCase().startsWith(name)) : [];
  return prefixed.length === 1 ? prefixed[0] : undefined;
}
