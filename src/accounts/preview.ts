// A short, JSON-like text of any value, for a rejects line whose record cannot be written as JSON
// (nested too deeply, a cycle, a BigInt, a getter that throws). Built with an explicit stack and
// a character budget, so it neither recurses nor walks more of the value than it prints; and it
// never throws, since it runs while reporting a problem and must not become a second one.

/** Characters a preview keeps before it is cut with an ellipsis. */
export const PREVIEW_LENGTH = 200;

interface Frame {
  readonly value: object;
  /** Keys of an object; undefined for an array. */
  readonly keys: string[] | undefined;
  readonly length: number;
  next: number;
}

function scalar(value: unknown, budget: number): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > budget ? value.slice(0, budget) : value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return String(value);
    case 'bigint':
      return String(value);
    default:
      // undefined, functions and symbols, as JSON.stringify writes them inside an array.
      return 'null';
  }
}

/** `value` as JSON text, cut at `maxLength` characters with a trailing '…'. */
export function previewValue(value: unknown, maxLength: number = PREVIEW_LENGTH): string {
  let out = '';
  const stack: Frame[] = [];
  let pending = true;
  let next: unknown = value;
  try {
    while (out.length <= maxLength) {
      if (pending) {
        pending = false;
        let item = next;
        if (typeof item === 'object' && item !== null && typeof (item as { toJSON?: unknown }).toJSON === 'function') {
          // A Date (or anything with toJSON) reads best as what JSON would show; only a scalar
          // answer is used, so a toJSON returning another deep object cannot unbound the walk.
          const shown: unknown = (item as { toJSON(): unknown }).toJSON();
          if (typeof shown !== 'object' || shown === null) item = shown;
        }
        if (typeof item !== 'object' || item === null) {
          out += scalar(item, maxLength - out.length + 1);
        } else if (Array.isArray(item)) {
          out += '[';
          stack.push({ value: item, keys: undefined, length: item.length, next: 0 });
        } else {
          out += '{';
          const keys = Object.keys(item);
          stack.push({ value: item, keys, length: keys.length, next: 0 });
        }
        continue;
      }
      const top = stack.at(-1);
      if (top === undefined) break;
      if (top.next >= top.length) {
        out += top.keys === undefined ? ']' : '}';
        stack.pop();
        continue;
      }
      if (top.next > 0) out += ',';
      if (top.keys === undefined) {
        next = (top.value as unknown[])[top.next];
      } else {
        const key = top.keys[top.next] as string;
        out += `${JSON.stringify(key.length > maxLength ? key.slice(0, maxLength) : key)}:`;
        next = (top.value as Record<string, unknown>)[key];
      }
      top.next += 1;
      pending = true;
    }
  } catch {
    // A getter or proxy that throws: what was read so far is the preview.
    return `${out.slice(0, maxLength)}…`;
  }
  const complete = !pending && stack.length === 0 && out.length <= maxLength;
  return complete ? out : `${out.slice(0, maxLength)}…`;
}
