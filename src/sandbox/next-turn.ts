// Long jobs inside a request (parsing a large body, validating its records) run in slices with
// this between them, so other clients' requests and I/O are served meanwhile.

export type NextTurn = () => Promise<void>;

/** Resolves on the next turn of the event loop, after pending I/O callbacks have run. */
export const nextTurn: NextTurn = () => new Promise((resolve) => setImmediate(resolve));
