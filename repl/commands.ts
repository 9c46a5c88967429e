// Dot-commands of the REPL. Node's .help lists them with the help text given here.
import { chmodSync, writeFileSync } from 'node:fs';
import type { REPLServer } from 'node:repl';
import { inspect } from 'node:util';
import type { LenderSession } from '../src/session/context.ts';
import { oneLine, stackOf } from './errors.ts';
import { promptAgain } from './prompt.ts';

export interface ReplState {
  session: LenderSession | undefined;
  ready: Promise<LenderSession>;
  lastError: unknown;
  connectError: unknown;
}

interface Io {
  out: (text: string) => void;
  debug: boolean;
  /** The history's filter: a line that holds a password or token. */
  isSecret: (line: string) => boolean;
  /** Work the next line waits for. */
  track: (work: Promise<unknown>) => void;
}

/** Runs an async command body, then shows the prompt again; errors become one line. */
function asyncCommand(server: REPLServer, io: Io, body: () => Promise<string>): void {
  server.clearBufferedCommand();
  io.track(body().then(
    (text) => io.out(text),
    (error: unknown) => io.out(io.debug ? stackOf(error) : oneLine(error)),
  ).finally(() => promptAgain(server)));
}

export function defineCommands(server: REPLServer, state: ReplState, io: Io): void {
  server.defineCommand('datasets', {
    help: 'List the datasets of the live catalog with their availability',
    action() {
      asyncCommand(server, io, async () => {
        const session = await state.ready;
        return session.catalog.table().text;
      });
    },
  });

  server.defineCommand('whoami', {
    help: 'Show who the session is logged in as (never the password or tokens)',
    action() {
      asyncCommand(server, io, async () => inspect((await state.ready).whoami()));
    },
  });

  server.defineCommand('relogin', {
    help: 'Log in again with the same credentials (fresh tokens)',
    action() {
      asyncCommand(server, io, async () => {
        const id = await (await state.ready).relogin();
        return `Logged in again as ${id.lender} (${id.email}).`;
      });
    },
  });

  server.defineCommand('stack', {
    help: 'Show the full stack of the last error',
    action() {
      server.clearBufferedCommand();
      io.out(state.lastError === undefined ? 'No error so far.' : stackOf(state.lastError));
      server.displayPrompt();
    },
  });

  // Node's own .save writes every line typed, secrets included, with the default file mode.
  server.defineCommand('save', {
    help: 'Save the lines typed so far to a file (mode 600; lines that hold a secret are left out)',
    action(file: string) {
      server.clearBufferedCommand();
      const path = file.trim();
      if (path === '') {
        io.out('Name the file: .save FILE');
      } else {
        const typed = (server as unknown as { lines?: string[] }).lines ?? [];
        const kept = typed.filter((line) => !io.isSecret(line));
        try {
          writeFileSync(path, kept.join('\n') + '\n', { mode: 0o600 });
          chmodSync(path, 0o600); // an existing file keeps its old mode otherwise
          io.out(`Saved ${kept.length} lines to ${path}${kept.length < typed.length ? ` (${typed.length - kept.length} with a secret left out)` : ''}.`);
        } catch (error) {
          io.out(oneLine(error));
        }
      }
      server.displayPrompt();
    },
  });
}
