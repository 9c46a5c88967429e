// The size of the JS heap's young generation for the commands that move rows. V8 sizes it from
// the machine's memory: on Node 24 with a few GB or more it grows to 128 MB, and a command that
// parses page after page fills it between collections (a 1,000,000-row sync peaked some 90 to
// 120 MB higher than with 8 MB semi-spaces, and used more CPU: docs/cli.md#memory). The flag can
// only be given when Node starts, so such a command starts Node again in the same process, with
// the same pid, stdio and environment (process.execve, Node 22.15 and later; the environment with
// MALLOC_ARENA_MAX, see restartEnv): a kill or a signal reaches it as before. Where Node cannot
// start again (Node 20, Windows, a descriptor the second start would lose), the young generation
// is held at that size in the running process instead (holdYoungGeneration). A size the user gave
// wins.
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { asksForHelp } from './command.ts';

/** The semi-space size given, MB (Node 20 and 22 let it grow to 16, Node 24 here to 64). */
export const SEMI_SPACE_MB = 8;

const FLAG = '--max-semi-space-size';
const GROWTH_FLAG = '--semi-space-growth-factor';

export interface ProcessView {
  argv: readonly string[];
  execArgv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  execPath: string;
  platform: string;
  execve?: unknown;
}

/** How a command starts: again with the flag (these arguments), held in this process, or as it is. */
export type YoungGenerationPlan = { restart: string[] } | 'hold' | undefined;

/**
 * How to size this command's young generation. As it is: not one of `dataCommands` (those that
 * move rows), or only its help; or a size the user gave (on the command line or in NODE_OPTIONS;
 * a growth factor only on the command line, as Node refuses it in NODE_OPTIONS), which the
 * restart also is. Held in this process: under a debugger attached by `--inspect…`, with
 * a descriptor beyond stdio the command may need, or on a Node that cannot replace itself.
 * Otherwise started again, with the flag.
 */
export function planYoungGeneration(proc: ProcessView, dataCommands: ReadonlySet<string>): YoungGenerationPlan {
  const [command, ...rest] = proc.argv.slice(2);
  if (command === undefined || !dataCommands.has(command) || asksForHelp(rest)) return undefined;
  // V8 reads `_` and `-` in a flag's name alike.
  const given = (arg: string) => USER_SIZES.has(arg.replaceAll('_', '-').split('=')[0]!);
  const options = [...proc.execArgv, ...(proc.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (options.some(given)) return undefined;
  if (typeof proc.execve !== 'function' || proc.platform === 'win32') return 'hold';
  // Under a debugger, a second start would wait for it (or break) once more.
  if (options.some((arg) => arg.startsWith('--inspect'))) return 'hold';
  // Node marks the descriptors it inherited beyond stdio close-on-exec, so the second start may
  // not have them: a parent's IPC channel, or a descriptor named on the command line or in the
  // environment (bash's `--password-file <(…)` is /dev/fd/63) keeps the first start.
  if (proc.env.NODE_CHANNEL_FD !== undefined) return 'hold';
  if ([...proc.argv.slice(2), ...Object.values(proc.env)].some((text) => text !== undefined && namesDescriptor(text))) return 'hold';
  return { restart: [proc.execPath, `${FLAG}=${SEMI_SPACE_MB}`, ...proc.execArgv, ...proc.argv.slice(1)] };
}

/** The flags that size the young generation: the user's own are kept. */
const USER_SIZES = new Set([FLAG, GROWTH_FLAG]);

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

/** Sizes this command's young generation as planYoungGeneration says. Returns only when it does
 * not start again (process.execve does not return). */
export function limitYoungGeneration(dataCommands: ReadonlySet<string>): void {
  const plan = planYoungGeneration(process, dataCommands);
  if (plan === undefined) return;
  if (plan !== 'hold') {
    try {
      const { execve } = process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never };
      execve?.(process.execPath, plan.restart, restartEnv(process.env));
    } catch {
      // Not allowed here (a sandboxed process, say): held in this process instead.
    }
  }
  holdYoungGeneration();
}

/** V8's own growth factor of the young generation. */
const GROWTH_FACTOR = 2;

/**
 * Holds the young generation at SEMI_SPACE_MB in the running process. V8 doubles a semi-space when
 * many objects survived the collections since it last grew, up to its maximum (16 MB on Node 20),
 * and it reads the growth factor each time: after each collection the factor is set to 1 once a
 * doubling would pass the size, and back to 2 when V8 shrank the semi-space to half of it or less
 * (it does when little is allocated; a shrink to a size between leaves it there, under the size). This runs after a collection, not in it, so code that never yields could grow it
 * once more; the commands that move rows yield at every page. MALLOC_ARENA_MAX cannot be set this
 * way: glibc reads it at start.
 */
export function holdYoungGeneration(): void {
  let factor = GROWTH_FACTOR;
  const observer = new PerformanceObserver(() => {
    const wanted = 2 * semiSpaceCapacity() > SEMI_SPACE_MB * 1024 * 1024 ? 1 : GROWTH_FACTOR;
    if (wanted === factor) return;
    factor = wanted;
    setFlagsFromString(`${GROWTH_FLAG}=${wanted}`);
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** The bytes the young generation can hold before its next collection: one semi-space. */
export function semiSpaceCapacity(): number {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return space === undefined ? 0 : space.space_used_size + space.space_available_size;
}
