// Objects parsed from JSON (rows, state files) are ordinary objects: a name Object.prototype also
// has (toString, constructor, __proto__) reads as the prototype's member where the object lacks
// it, and assigning to __proto__ replaces the prototype instead of adding a field. Names that come
// from outside the program (a command, a row's fields, its public_id, a state key) go through these.

/** The object's own field `name`, or undefined. */
export function ownField<V>(obj: Readonly<Record<string, V>>, name: string): V | undefined {
  return Object.hasOwn(obj, name) ? obj[name] : undefined;
}

/** Whether `obj[name]` can find something `obj` does not hold: decide once, then use ownField
 * only for such names where the plain lookup is a hot path. */
export function isInheritedName(name: string): boolean {
  return name in Object.prototype;
}

/** `bag` (a new object when null) with its own field `name` set, __proto__ included. */
export function withField<T extends Record<string, unknown>>(bag: T | null, name: string, value: T[string]): T {
  const into = bag ?? ({} as T);
  if (name === '__proto__') Object.defineProperty(into, name, { value, enumerable: true, writable: true, configurable: true });
  else (into as Record<string, unknown>)[name] = value;
  return into;
}
