// `lender repl [--sandbox]`: an interactive shell, already logged in (repl/start.ts).
// Its prompt comes before anything heavy loads: the session (client, sandbox) is imported and
// connected behind it, and the lines typed meanwhile wait for it. Keep the imports here light.
import { integerFlag, parseCommandArgs } from '../args.ts';
import { EXIT, UsageError, type Command } from '../command.ts';
import { CONNECTION_HELP, CONNECTION_OPTIONS, connectionSettings } from '../connection-flags.ts';
import { version } from '../../core/version.ts';
import type { LenderSession, SessionOptions } from '../../session.ts';
import { DEFAULT_OPTIONS, DEFAULT_SEED, MAX_SCALE, MAX_SEED } from '../../sandbox/options.ts';

async function openSessionLazily(options: SessionOptions): Promise<LenderSession> {
  // The sandbox's modules load alongside the session's rather than after them (connect() imports
  // it again, from the module cache).
  const [{ openSession }] = await Promise.all([
    import('../../session.ts'),
    options.sandbox ? import('../../sandbox/index.ts') : undefined,
  ]);
  return openSession(options);
}

// repl/ sits above src/: this command reaches it only through the lazy import in run(), so the
// name is repeated here rather than imported (test/repl/units.test.ts checks the help uses it).
const HISTORY_ENV = 'LENDER_REPL_HISTORY';

const HELP = `Usage: lender repl [--sandbox [--seed N] [--scale N]] [connection flags]

An interactive Node.js REPL with a logged-in session. Top-level await works:
  await rows('D07', {limit: 3})      first rows of a dataset, as a table
  await count('D23')                 rows in a dataset (via datasets: summed per month)
  await describe('D07')              fields, types, null share, distinct values, row count
  await pages('D03', {pages: 2})     page summaries
  for await (const r of stream('D07')) { ... }
  await push('accounts.ndjson')      push account records; rejects are listed
  await flag([{status: 'doNotContact', debtorCompanyId: 'C-1', accountId: 'A-1'}])
  await sync(['D07'], {to: 'duckdb:lender.duckdb'})
  await sql('SELECT payment_status, count(*) FROM d07 GROUP BY ALL')   over that file
  table(await rows('D07'), ['public_id', 'amount']), chart({SUCCESS: 10, FAILED: 2})
Commands: .datasets .whoami .relogin .stack .save FILE .help .exit
Ctrl-C stops a running call and keeps the REPL. Errors print as one line; .stack (or
LENDER_DEBUG=1) shows the stack.

History is written as you go to $${HISTORY_ENV}, else
$XDG_STATE_HOME/lender-streams/repl_history (default ~/.local/state/...), mode 600.
Lines that look like they hold a password or token are never written.
Set ${HISTORY_ENV}= (empty) to keep no history.

  --seed N              seed of the embedded sandbox (default ${DEFAULT_SEED})
  --scale N             rows per dataset of the embedded sandbox (default ${DEFAULT_OPTIONS.scale})
  -h, --help            this text
${CONNECTION_HELP}`;

const command: Command = {
  name: 'repl',
  summary: 'interactive shell, already logged in',
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { ...CONNECTION_OPTIONS, seed: { type: 'string' }, scale: { type: 'string' } });
    const seed = integerFlag(values.seed, '--seed', { min: 0, max: MAX_SEED });
    const scale = integerFlag(values.scale, '--scale', { max: MAX_SCALE });
    if (!values.sandbox && (seed !== undefined || scale !== undefined)) throw new UsageError('--seed and --scale need --sandbox');

    let options: SessionOptions;
    let connectingTo: string;
    if (values.sandbox) {
      options = { sandbox: { ...(seed !== undefined ? { seed } : {}), ...(scale !== undefined ? { scale } : {}) }, env: io.env };
      connectingTo = 'an embedded sandbox';
    } else {
      // Credentials resolved first, as every client command does: missing ones are a usage error
      // naming the flags, said before any "logging in". Ctrl-C while logging in stops the
      // command (exit 130).
      const settings = await connectionSettings(values, io);
      options = { ...settings, env: io.env, signal: io.signal };
      connectingTo = settings.authUrl ?? 'the configured service';
    }

    // Against a real service, connect before the prompt so bad credentials end the command with
    // its exit code (said on stderr, as the login may take a while); the embedded sandbox
    // connects behind the prompt, which comes up at once.
    const session = openSessionLazily(options);
    // The REPL reports a failed connection; until it listens, the failure is not unhandled.
    session.catch(() => undefined);
    if (!values.sandbox) {
      io.stderr.write(`lender repl: logging in to ${connectingTo}… (Ctrl-C stops)\n`);
      await session;
    }
    const { runRepl } = await import('../../../repl/start.ts');
    const stdin = io.stdin as NodeJS.ReadableStream & { isTTY?: boolean };
    const stdout = io.stdout as NodeJS.WritableStream & { isTTY?: boolean };
    const code = await runRepl({
      session,
      connectingTo,
      input: stdin,
      output: stdout,
      terminal: Boolean(stdin.isTTY && stdout.isTTY),
      env: io.env,
      version: version,
    });
    return code === 0 ? EXIT.ok : EXIT.failure;
  },
};

export default command;
