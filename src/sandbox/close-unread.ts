// Answers a request whose body is left unread, then closes its connection.
//
// Handing the answer to Node's ServerResponse would not do here: once the answer is sent, Node
// reads the rest of the body to throw it away and then destroys the socket, and destroying a
// socket with unread bytes waiting sends a TCP reset, which can reach the client before it read
// the answer. So the answer is written straight to the paused socket, the sending side is shut
// (TLS close_notify and FIN: the client sees a complete answer and the end), and the socket is
// destroyed a little later, by which time the client has the answer.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/** How long a closed-for-sending connection waits before it is destroyed. */
export const LINGER_MS = 500;

export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: Buffer;
}

/** HTTP/1.1 response bytes; header values here are the server's own, never the client's. */
export function encodeAnswer({ status, headers, payload }: RawAnswer): Buffer {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}`];
  for (const [name, value] of Object.entries({ ...headers, 'content-length': String(payload.length), connection: 'close' })) {
    lines.push(`${name}: ${value}`);
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

export function answerAndClose(socket: Socket, answer: RawAnswer, lingerMs = LINGER_MS): void {
  socket.pause();
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(encodeAnswer(answer));
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
