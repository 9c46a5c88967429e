// Tab completion: dataset codes inside a string literal (`rows('D0<Tab>`), on top of Node's own
// completer, which already knows the helpers because they live in the REPL context.
import type { REPLServer } from 'node:repl';

type CompleterResult = [string[], string];
type Completer = (line: string, callback: (error: Error | null, result?: CompleterResult) => void) => void;

/** Completion of a dataset code being typed in a string at the end of `line`, or undefined. */
export function completeDatasetCode(line: string, codes: readonly string[]): CompleterResult | undefined {
  const match = /(['"`])([A-Za-z]\d{0,2})$/.exec(line) ?? /(['"`])()$/.exec(line);
  if (match === null) return undefined;
  const prefix = match[2]!;
  const upper = prefix.toUpperCase();
  const hits = codes.filter((c) => c.startsWith(upper));
  if (hits.length === 0) return undefined;
  // Complete to the code with its closing quote when it is the only one left.
  const quote = match[1]!;
  return [hits.length === 1 ? [`${hits[0]}${quote}`] : [...hits], prefix];
}

export function installCompleter(server: REPLServer, codes: () => readonly string[]): void {
  const target = server as unknown as { completer: Completer };
  const base = target.completer.bind(server);
  target.completer = (line, callback) => {
    const own = completeDatasetCode(line, codes());
    if (own !== undefined) {
      callback(null, own);
      return;
    }
    base(line, callback);
  };
}
