// Chunks read ahead (to detect a format, or the first character) followed by the rest of the
// source. The source is closed however the reader stops (the end, a break, an error), so a file
// behind it is never left open.
export async function* replay<T>(head: readonly T[], rest: AsyncIterator<T>): AsyncGenerator<T> {
  try {
    yield* head;
    for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value;
  } finally {
    await rest.return?.();
  }
}
