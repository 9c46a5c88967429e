// How deeply a record nests objects and arrays, checked without recursion.
//
// Why a limit at all: JSON.parse builds values of any depth (it is iterative), but JSON.stringify
// recurses, so a record parsed from a hostile line such as 200,000 nested brackets overflows the
// stack when the writer serialises it for the request or the rejects file, and the whole run dies
// with "Maximum call stack size exceeded". A record the service means to store never needs more
// than a few levels (additionalData is free key-value, usually flat), so a generous, documented
// limit refuses such input up front as one rejected record instead.
//
// The walk is an explicit stack, stops as soon as the limit is crossed (so a cycle or a
// million-level value costs at most MAX_RECORD_DEPTH steps down), and never recurses itself.

/** Objects and arrays nested inside one another in a record, the record itself being level 1. */
export const MAX_RECORD_DEPTH = 64;

export const TOO_DEEP_MESSAGE = `record is nested too deeply (more than ${MAX_RECORD_DEPTH} levels)`;

const hasOwn = Object.hasOwn;

/** What the depth walk also notes on its way, sparing a second walk of every record. */
export interface WalkNotes {
  /** An object of the value (the value itself included) has a toJSON of its own. */
  ownToJson: boolean;
}

/** True when `value` holds objects/arrays nested more than `max` levels deep (the value itself,
 * if it is an object, is level 1). Counts what JSON.stringify would walk: own enumerable string
 * keys and array elements. Typed arrays and Buffers count as one level (their elements are
 * numbers). `notes`, when given, is filled in for the part walked (all of it unless too deep). */
export function isNestedDeeperThan(value: unknown, max: number = MAX_RECORD_DEPTH, notes?: WalkNotes): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max < 1) return true;
  // Two parallel stacks (object, its level) rather than pairs: no allocation per object visited.
  const objects: object[] = [value];
  const levels: number[] = [1];
  while (objects.length > 0) {
    const current = objects.pop() as object;
    const level = levels.pop() as number;
    // Own, enumerable or not, on an object, an array or a typed array: JSON.stringify calls it.
    if (notes !== undefined && hasOwn(current, 'toJSON')) notes.ownToJson = true;
    if (ArrayBuffer.isView(current)) continue;
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const child: unknown = current[i];
        if (typeof child !== 'object' || child === null) continue;
        if (level >= max) return true;
        objects.push(child);
        levels.push(level + 1);
      }
      continue;
    }
    // for-in with an own-key test rather than Object.keys: no key array per object, on a path
    // that runs for every record written.
    for (const key in current) {
      if (!hasOwn(current, key)) continue;
      const child: unknown = (current as Record<string, unknown>)[key];
      if (typeof child !== 'object' || child === null) continue;
      if (level >= max) return true;
      objects.push(child);
      levels.push(level + 1);
    }
  }
  return false;
}
