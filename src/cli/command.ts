// The shape every `lender` sub-command module exports as its default.

/** Exit codes (a contract: scripts rely on them; docs/cli.md). */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  rejected: 3,
} as const;

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

/** Bad arguments: printed with a pointer to --help, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
