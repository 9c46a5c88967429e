// Showing the prompt again after asynchronous work. The REPL may have closed meanwhile (piped
// stdin that ended while a command ran); Node 24 throws ERR_USE_AFTER_CLOSE on a prompt then.
import type { REPLServer } from 'node:repl';

export function promptAgain(server: REPLServer, preserveCursor = false): void {
  // readline sets `closed` on close (Node 20 and later); it is not in @types/node 20.
  if ((server as REPLServer & { closed?: boolean }).closed === true) return;
  server.displayPrompt(preserveCursor);
}
