// Argument parsing shared by every sub-command: node:util parseArgs in strict mode with its
// errors as UsageError (exit 2) in our own words, and the number and duration checks several
// commands need. Light on purpose (no luxon, no client): `lender repl` parses its flags with it
// before its prompt shows. The export commands' flags are in export-flags.ts.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from '../core/errors.ts';
import { parseDuration, parseInteger } from '../core/options.ts';
import { UsageError } from './command.ts';
import { closestName, editDistance } from '../core/closest-name.ts';

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options, P extends boolean> =
  ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: P }>>;

/** Strict parseArgs: an unknown flag or a missing value is a usage error, not a stack trace. */
export function parseCommandArgs<const O extends Options, const P extends boolean = false>(
  argv: string[], options: O, allowPositionals?: P,
): Parsed<O, P> {
  const unknown = firstUnknownFlag(argv, options);
  if (unknown !== undefined) throw unknownFlagError(unknown, options);
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: (allowPositionals ?? false) as P });
  } catch (error) {
    throw new UsageError(parseErrorText(error as Error & { code?: string }));
  }
}

/** The first flag the command does not know, as typed (`--sinse`, `-x`), never with its value. */
function firstUnknownFlag(argv: string[], options: Options): string | undefined {
  const { tokens } = parseArgs({ args: argv, options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === 'option-terminator') return undefined;
    if (token.kind === 'option' && !Object.hasOwn(options, token.name)) return token.rawName;
  }
  return undefined;
}

// The password is never a flag value: a flag would leave it in shell history and `ps` output.
const PASSWORD_FLAGS = new Set(['--password', '--pass', '--passwd', '--pw']);

/** --password in any case, cut short (--passw) or misspelt (--pasword, --passowrd): meant to carry
 * a password all the same. Shorter names (--pa) and others (--pages) are not taken for it. */
function looksLikePassword(flag: string): boolean {
  const name = flag.replace(/^-+/, '').toLowerCase();
  if (PASSWORD_FLAGS.has(`--${name}`)) return true;
  return name.length >= 3 && ('password'.startsWith(name) || (name.length >= 6 && editDistance(name, 'password') <= 2));
}

function unknownFlagError(flag: string, options: Options): UsageError {
  // Before any suggestion: "did you mean --password-file?" would have the password given as a file name.
  if (looksLikePassword(flag) && Object.hasOwn(options, 'password-file')) {
    return new UsageError(
      `there is no ${flag} flag, so a password never lands in shell history or the process list: ` +
        'put it in a file and pass --password-file FILE, or set LENDER_PASSWORD',
      { pointToHelp: false },
    );
  }
  const known = Object.keys(options).map((name) => `--${name}`);
  const suggestion = flag.startsWith('--') ? closestName(flag, known) : undefined;
  if (suggestion !== undefined) return new UsageError(`unknown option ${flag}; did you mean ${suggestion}?`, { pointToHelp: false });
  return new UsageError(`unknown option ${flag}`);
}

/** Node's parseArgs messages, in the words of the other usage errors. */
function parseErrorText(error: Error & { code?: string }): string {
  const message = error.message;
  let m: RegExpExecArray | null;
  if ((m = /^Option '(-\S+)(?: <value>)?' argument missing/.exec(message)) !== null) return `${m[1]} needs a value`;
  if ((m = /^Option '(-\S+)(?: <value>)?' argument is ambiguous/.exec(message)) !== null) {
    return `${m[1]} needs a value (for a value that starts with '-', write ${m[1]}=VALUE)`;
  }
  if ((m = /^Option '(-\S+)' does not take an argument/.exec(message)) !== null) return `${m[1]} takes no value`;
  if ((m = /^Unexpected argument '(.*)'\. This command does not take positional arguments/s.exec(message)) !== null) {
    return `unexpected argument '${m[1]}': this command takes only options`;
  }
  return message;
}

/** The options module's check of a flag's value, refused as a usage error (exit 2). */
export function checked<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/** A whole number within [min, max] (min 1 unless given); undefined when the flag was not given. */
export function integerFlag(
  value: string | undefined, flag: string, { min = 1, max = Number.MAX_SAFE_INTEGER }: { min?: number; max?: number } = {},
): number | undefined {
  if (value === undefined) return undefined;
  return checked(() => parseInteger(value, flag, { min, max }));
}

/** Milliseconds, at least 1: 2m, 90s, 1.5h, 500ms, a bare number of ms (or an ISO duration);
 * undefined when the flag was not given. */
export function durationFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  return checked(() => parseDuration(value, flag, { min: 1 }));
}

/** A finite decimal number (e.g. a rate); undefined when the flag was not given. */
export function numberFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === '' || !/^[\d.eE+-]+$/.test(value.trim()) || !Number.isFinite(number)) {
    throw new UsageError(`${flag} must be a number, not '${value}'`);
  }
  return number;
}

/** Whether to show progress on stderr: with --progress, or whenever stderr is a terminal. */
export function progressFlag(value: boolean | undefined, stderr: NodeJS.WritableStream): boolean {
  return value === true || (stderr as { isTTY?: boolean }).isTTY === true;
}
