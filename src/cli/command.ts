// The shape every `lender` sub-command module exports as its default.

/** Exit codes (a contract: scripts rely on them; docs/cli.md). */
export const EXIT = {
  ok: 0,
  /** Something failed while running: network, login refused, server, an unreadable input file. */
  failure: 1,
  /** The command line or the configuration is wrong: fix it and run again. */
  usage: 2,
  /** Finished, but the service or validation refused some records (push, flag). */
  rejected: 3,
  /** Stopped by Ctrl-C (SIGINT) or SIGTERM. */
  interrupted: 130,
} as const;

/** The rule, as `lender --help` and the command helps state it. */
export const EXIT_CODES_HELP =
  'Exit codes: 0 success; 1 runtime failure (network, login, server, unreadable input file);\n' +
  '2 usage or configuration mistake (flags, credentials, URL); 3 some records rejected (push,\n' +
  'flag); 130 interrupted (Ctrl-C or SIGTERM).';

export interface CommandIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted on the first SIGINT/SIGTERM so the command can stop cleanly (state saved). */
  readonly signal: AbortSignal;
}

export interface Command {
  readonly name: string;
  /** One line for `lender --help`. */
  readonly summary: string;
  /** Full text for `lender <name> --help`. */
  readonly help: string;
  /** Returns the exit code. Throw UsageError for bad arguments. */
  run(argv: string[], io: CommandIo): Promise<number>;
}

/** Bad arguments: exit code 2, printed with a pointer to --help unless the message says what to type. */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly pointToHelp: boolean;

  constructor(message: string, opts: { pointToHelp?: boolean } = {}) {
    super(message);
    this.pointToHelp = opts.pointToHelp ?? true;
  }
}

/** A failure while running that is not the service's (an input file that cannot be read): exit code 1. */
export class CommandFailure extends Error {
  override name = 'CommandFailure';
}

/** Whether a command's arguments ask for its help (`--help` or `-h` anywhere among them). */
export function asksForHelp(args: readonly string[]): boolean {
  return args.includes('--help') || args.includes('-h');
}
