// The size of the JS heap's young generation for the commands that move rows. V8 sizes it from
// the machine's memory: on Node 24 with a few GB or more it grows to 128 MB, and a command that
// parses page after page fills it between collections (a 1,000,000-row sync peaked some 90 to
// 120 MB higher than with 8 MB semi-spaces, and used more CPU: docs/cli.md#memory). The flag can
// only be given when Node starts, so such a command starts Node again in the same process, with
// the same pid, stdio and environment (process.execve, Node 22.15 and later; the environment with
// MALLOC_ARENA_MAX, see restartEnv): a kill or a signal reaches it as before. A semi-space size
// the user gave wins; a Node without execve runs as it is.
import { asksForHelp } from './command.ts';

/** The semi-space size given, MB (Node 20 and 22 let it grow to 16, Node 24 here to 64). */
export const SEMI_SPACE_MB = 8;

const FLAG = '--max-semi-space-size';

export interface ProcessView {
  argv: readonly string[];
  execArgv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  execPath: string;
  platform: string;
  execve?: unknown;
}

/**
 * The argument vector to start this command again with, or undefined to run it as it is: not one
 * of `dataCommands` (those that move rows), or only its help; a semi-space size already given (by
 * this function's own start, or by the user on the command line or in NODE_OPTIONS); a debugger
 * attached by `--inspect…`; a descriptor beyond stdio the command may need; or a Node that cannot
 * replace itself.
 */
export function restartArgs(proc: ProcessView, dataCommands: ReadonlySet<string>): string[] | undefined {
  const [command, ...rest] = proc.argv.slice(2);
  if (command === undefined || !dataCommands.has(command) || asksForHelp(rest)) return undefined;
  if (typeof proc.execve !== 'function' || proc.platform === 'win32') return undefined;
  // V8 reads `_` and `-` in a flag's name alike.
  const given = (arg: string) => arg.replaceAll('_', '-').split('=')[0] === FLAG;
  const options = [...proc.execArgv, ...(proc.env.NODE_OPTIONS ?? '').split(/\s+/)];
  // Under a debugger, a second start would wait for it (or break) once more.
  if (options.some((arg) => given(arg) || arg.startsWith('--inspect'))) return undefined;
  // Node marks the descriptors it inherited beyond stdio close-on-exec, so the second start may
  // not have them: a parent's IPC channel, or a descriptor named on the command line or in the
  // environment (bash's `--password-file <(…)` is /dev/fd/63) keeps the first start.
  if (proc.env.NODE_CHANNEL_FD !== undefined) return undefined;
  if ([...proc.argv.slice(2), ...Object.values(proc.env)].some((text) => text !== undefined && namesDescriptor(text))) return undefined;
  return [proc.execPath, `${FLAG}=${SEMI_SPACE_MB}`, ...proc.execArgv, ...proc.argv.slice(1)];
}

/** Whether the text names a file descriptor other than stdin, stdout and stderr (/dev/fd/N, /proc/…/fd/N). */
function namesDescriptor(text: string): boolean {
  for (const match of text.matchAll(/\/(?:dev|proc\/[^/\s]+)\/fd\/(\d+)/g)) if (Number(match[1]) > 2) return true;
  return false;
}

/**
 * The environment of the second start: the same, with glibc's MALLOC_ARENA_MAX at 1 unless the
 * user set it. glibc gives each thread that allocates an arena of its own (up to 8 a core), and
 * each keeps memory freed into it: a DuckDB sync of 1,000,000 rows peaked 15 MB lower on Node 22
 * with 2 arenas than with 8, and on Node 24 5 MB lower again with 1, in the same time
 * (docs/benchmarks.md). Other C libraries ignore it.
 */
export function restartEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return env.MALLOC_ARENA_MAX === undefined ? { ...env, MALLOC_ARENA_MAX: ARENAS } : env;
}

const ARENAS = '1';

/** Starts this process again with a smaller young generation when restartArgs says so; returns
 * only when it does not (process.execve does not return). */
export function limitYoungGeneration(dataCommands: ReadonlySet<string>): void {
  const args = restartArgs(process, dataCommands);
  if (args === undefined) return;
  try {
    const { execve } = process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never };
    execve?.(process.execPath, args, restartEnv(process.env));
  } catch {
    // Not allowed here (a sandboxed process, say): the command runs with V8's own sizes.
  }
}
