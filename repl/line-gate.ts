// Runs the REPL's lines one at a time, in the order they came: a line starts once the one before
// it has finished (its evaluation settled, its dot-command's work done), and no line starts before
// the session has connected. Node's REPL runs a line as soon as readline hands it over, so piped
// input (`printf … | lender repl`) would run `x` before the `await` above it had finished, and a
// queued `.exit` would close the session under a running call.
import type { REPLServer } from 'node:repl';

type LineListener = (line: string) => void;

export class LineGate {
  readonly #deliver: LineListener;
  readonly #queue: string[] = [];
  #open = false;
  #closed = false;
  #busy = false;
  #ended: (() => void) | undefined;
  /** The work the line being delivered starts, while it is delivered. */
  #work: Promise<unknown>[] | undefined;

  /** Takes over the server's 'line' listeners (Node's evaluator, the history): they now get each
   * line through the gate. */
  constructor(server: REPLServer) {
    const listeners = server.listeners('line') as LineListener[];
    server.removeAllListeners('line');
    this.#deliver = (line) => {
      for (const listener of listeners) listener.call(server, line);
    };
    server.on('line', (line: string) => this.push(line));
    server.once('exit', () => this.close());
  }

  push(line: string): void {
    if (this.#closed) return;
    this.#queue.push(line);
    this.#pump();
  }

  /** Lines may run: the session has connected. */
  open(): void {
    this.#open = true;
    this.#pump();
  }

  /** No more lines will come; `done` runs once the queued ones have finished. */
  end(done: () => void): void {
    this.#ended = done;
    this.#pump();
  }

  /** Drops the lines queued (typed ahead, not yet run) and says how many; later lines run. */
  cancelQueued(): number {
    return this.#queue.splice(0).length;
  }

  /** Drops what is queued; nothing more runs. */
  close(): void {
    this.#closed = true;
    this.#queue.length = 0;
  }

  /** Work started by the line being run (an evaluation, an asynchronous dot-command): the next
   * line waits for it. Work started outside a line (tab completion) is not waited for. */
  track(work: Promise<unknown>): void {
    this.#work?.push(work);
  }

  #pump(): void {
    if (this.#busy || this.#closed || !this.#open) return;
    const line = this.#queue.shift();
    if (line === undefined) {
      const ended = this.#ended;
      this.#ended = undefined;
      ended?.();
      return;
    }
    const work: Promise<unknown>[] = [];
    this.#work = work;
    try {
      this.#deliver(line);
    } finally {
      this.#work = undefined;
    }
    // The next line only on a later turn: Node closes the REPL on `.exit` in a nextTick, and the
    // lines after it must find it closed.
    this.#busy = true;
    void Promise.allSettled(work).then(() => setImmediate(() => {
      this.#busy = false;
      this.#pump();
    }));
  }
}
