// Entry point of the `lender` command: finds the sub-command, runs it, maps errors to exit codes.
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asksForHelp, CommandFailure, EXIT, EXIT_CODES_HELP, UsageError, type Command, type CommandIo } from './command.ts';
import { ConfigError, LenderError } from '../core/errors.ts';
import { ownField } from '../core/own-fields.ts';
import { redactText } from '../core/redact.ts';
import { version } from '../core/version.ts';
import { limitYoungGeneration } from './young-generation.ts';

// Sub-commands load lazily so `lender export` does not pay for the sandbox or the REPL. They must
// not import this module: when it is the entry point its top-level await is still pending, so such
// a cycle never settles and the process ends with exit code 13.
// `movesRows`: the command reads or writes many rows, so it starts with a smaller young
// generation where Node allows (young-generation.ts); the others are short, or interactive.
const COMMANDS: Record<string, { summary: string; movesRows?: true; load: () => Promise<{ default: Command }> }> = {
  sandbox: { summary: 'serve the sandbox service over HTTPS', movesRows: true, load: () => import('./commands/sandbox.ts') },
  catalog: { summary: 'list sections and datasets with availability', load: () => import('./commands/catalog.ts') },
  export: { summary: 'write a dataset as NDJSON rows on stdout', movesRows: true, load: () => import('./commands/export.ts') },
  sync: { summary: 'initial then incremental load of datasets into DuckDB, NDJSON files or PostgreSQL', movesRows: true, load: () => import('./commands/sync.ts') },
  push: { summary: 'create, update or withdraw accounts from NDJSON or JSON', movesRows: true, load: () => import('./commands/push.ts') },
  flag: { summary: 'set disputed / do-not-contact flags on accounts', movesRows: true, load: () => import('./commands/flag.ts') },
  repl: { summary: 'interactive shell, already logged in', load: () => import('./commands/repl.ts') },
  demo: { summary: 'the whole product on an embedded sandbox', movesRows: true, load: () => import('./commands/demo.ts') },
};

/** The names of the commands that move rows. */
export const DATA_COMMANDS: ReadonlySet<string> = new Set(Object.keys(COMMANDS).filter((name) => COMMANDS[name]!.movesRows));

function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    'Usage: lender <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Client commands take credentials from flags, else LENDER_AUTH_URL, LENDER_SUBDOMAIN,',
    'LENDER_EMAIL, LENDER_PASSWORD (and LENDER_CA_FILE), else the credentials file;',
    'or --sandbox to use an embedded sandbox.',
    '',
    'Run `lender <command> --help` for the options of a command. `lender --version` prints the version.',
    '',
    EXIT_CODES_HELP,
  ].join('\n');
}

export async function main(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    // A usage mistake like any other: one line on stderr, nothing on stdout.
    const names = Object.keys(COMMANDS);
    io.stderr.write(`lender: a command is needed: ${names.slice(0, -1).join(', ')} or ${names.at(-1)}. Run 'lender --help' for more.\n`);
    return EXIT.usage;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(mainHelp() + '\n');
    return EXIT.ok;
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(version + '\n');
    return EXIT.ok;
  }
  // Own names only: `lender toString` is an unknown command, not Object.prototype's.
  const entry = ownField(COMMANDS, name);
  if (entry === undefined) {
    // Loaded on this path only: every start pays for what main.ts imports.
    const { closestName } = await import('../core/closest-name.ts');
    // Before a command, the only options are --help and --version; a command's own come after
    // its name (`lender --sandbox push` meant `lender push --sandbox`).
    const option = name.startsWith('-');
    const guess = closestName(name, option ? ['--help', '--version'] : Object.keys(COMMANDS));
    const hint = guess !== undefined ? `; did you mean ${guess}?`
      : option ? ` before a command; its options go after its name: lender <command> ${name}.` : '.';
    io.stderr.write(`lender: unknown ${option ? 'option' : 'command'} '${name}'${hint} Run 'lender --help' for the list.\n`);
    return EXIT.usage;
  }
  const command = (await entry.load()).default;
  if (asksForHelp(rest)) {
    io.stdout.write(command.help.trimEnd() + '\n');
    return EXIT.ok;
  }
  // Client errors arrive scrubbed; this also covers errors from anywhere else, and the password
  // the environment holds (the service's, the database's), so no failure line can print a credential.
  const safe = (text: string): string => redactText(text, [io.env.LENDER_PASSWORD, io.env.PGPASSWORD]);
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      const pointer = error.pointToHelp ? `\nRun 'lender ${name} --help' for usage.` : '';
      io.stderr.write(`lender ${name}: ${safe(error.message)}${pointer}\n`);
      return EXIT.usage;
    }
    // Whatever a stop interrupted (a request, a login) failed because of the stop: say that.
    if (io.signal.aborted) {
      io.stderr.write(`lender ${name}: stopped.\n`);
      return EXIT.interrupted;
    }
    // An http:// URL, missing credentials, an unreadable password or CA file: fixed by the user.
    if (error instanceof ConfigError) {
      io.stderr.write(`lender ${name}: ${safe(error.message)}\n`);
      return EXIT.usage;
    }
    if (error instanceof LenderError || error instanceof CommandFailure) {
      io.stderr.write(`lender ${name}: ${safe(error.message)}\n`);
      return EXIT.failure;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`lender ${name}: ${safe(message)}\n`);
    if (io.env.LENDER_DEBUG) io.stderr.write(`${safe((error as Error)?.stack ?? '')}\n`);
    return EXIT.failure;
  }
}

function processIo(): CommandIo {
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals += 1;
    // A second Ctrl-C means "now": do not wait for cleanup.
    if (signals > 1) process.exit(EXIT.interrupted);
    controller.abort(new Error(`received ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // Built on first use: opening stdin costs a few milliseconds that most commands never need.
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    signal: controller.signal,
  };
}

/** Runs the command line of this process and sets its exit code. */
export async function runFromProcess(): Promise<void> {
  limitYoungGeneration(DATA_COMMANDS);
  process.exitCode = await main(process.argv.slice(2), processIo());
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) await runFromProcess();
