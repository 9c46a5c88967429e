// Dot-commands of the REPL. Node's .help lists them with the help text given here.
import type { REPLServer } from 'node:repl';
import { inspect } from 'node:util';
import type { LenderSession } from '../session/context.ts';
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
}

/** Runs an async command body, then shows the prompt again; errors become one line. */
function asyncCommand(server: REPLServer, io: Io, body: () => Promise<string>): void {
  server.clearBufferedCommand();
  body().then(
    (text) => io.out(text),
    (error: unknown) => io.out(io.debug ? stackOf(error) : oneLine(error)),
  ).finally(() => promptAgain(server));
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
}
