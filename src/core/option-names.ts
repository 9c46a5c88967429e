// From JavaScript (the REPL, notebooks, a script) any key can come in an options object, and a
// misspelt one (`concurrenc`) would be ignored, its default taken in silence: refused instead,
// naming it, like a bad value.
import { closestName } from './closest-name.ts';
import { ConfigError } from './errors.ts';

/** Every option of an options type, as a record so that the compiler finds one added to the type
 * and not here. */
export type OptionNames<T> = Record<keyof T, true>;

/** The first own key of `opts` that is not one of `names`, said in a sentence with the option
 * likely meant; undefined when there is none. */
export function unknownOption<T>(opts: T | undefined, names: OptionNames<T>, where: string): string | undefined {
  if (typeof opts !== 'object' || opts === null) return undefined;
  const known = Object.keys(names);
  const key = Object.keys(opts).find((name) => !Object.hasOwn(names, name));
  if (key === undefined) return undefined;
  const guess = closestName(key, known);
  return `${where} has no option '${key}'${guess === undefined ? ` (its options: ${known.join(', ')})` : `; did you mean '${guess}'?`}`;
}

/** Throws a ConfigError for an option not among `names` (unknownOption). */
export function checkOptionNames<T>(opts: T | undefined, names: OptionNames<T>, where: string): void {
  const unknown = unknownOption(opts, names, where);
  if (unknown !== undefined) throw new ConfigError(unknown);
}
