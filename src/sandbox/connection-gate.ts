// How many connections are served at once. A connection that arrives while `limit` are served is
// still accepted, so its request can be answered 503 with Retry-After instead of a bare reset;
// it is never served, and is closed after that answer (or soon, if it sends nothing). A
// connection being closed after a refusal no longer counts: it is on its way out, and counting it
// would let a burst of refused uploads lock out everyone else.
import type { Socket } from 'node:net';

/** An over-limit connection that sends no request within this long is closed. */
const OVER_LIMIT_IDLE_MS = 5000;

export class ConnectionGate {
  readonly limit: number;
  #served = 0;
  readonly #counted = new WeakSet<Socket>();
  readonly #overLimit = new WeakSet<Socket>();

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Connections served now. */
  get served(): number {
    return this.#served;
  }

  /** Call once per connection, when it is established. */
  admit(socket: Socket): void {
    if (this.#served >= this.limit) {
      this.#overLimit.add(socket);
      socket.setTimeout(OVER_LIMIT_IDLE_MS, () => socket.destroy());
      return;
    }
    this.#served += 1;
    this.#counted.add(socket);
    socket.once('close', () => this.release(socket));
  }

  isOverLimit(socket: Socket): boolean {
    return this.#overLimit.has(socket);
  }

  /** The connection stops counting: it closed, or it is being closed. */
  release(socket: Socket): void {
    if (!this.#counted.delete(socket)) return;
    this.#served -= 1;
  }
}
