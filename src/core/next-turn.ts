// Long synchronous work (parsing a large body, appending a group of rows to a database) runs in
// slices with this between them, so I/O waiting meanwhile is served: other clients' requests in
// the sandbox, the next page's response in an export.

export type NextTurn = () => Promise<void>;

/** Resolves on the next turn of the event loop, after pending I/O callbacks have run. */
export const nextTurn: NextTurn = () => new Promise((resolve) => setImmediate(resolve));
