// `lender sandbox --env`: the demo lender's connection as shell `export` lines (the LENDER_*
// variables the client reads), printed on stdout and kept while the sandbox runs in a file only
// its owner can read, so a second shell gets them with `eval "$(lender sandbox --env)"`: that
// command finds the file of the running sandbox, prints it and exits.
import { readFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ENV } from '../client/config.ts';
import { makeFolder } from '../core/make-folder.ts';
import { openPrivate } from '../core/private-files.ts';
import { selfIdentity, stillRunning } from '../exports/lock-holder.ts';

/** `$XDG_CONFIG_HOME/lender-streams/sandbox.env`, else `~/.config/lender-streams/sandbox.env`:
 * the folder of the credentials file. */
export function envFilePath(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'lender-streams', 'sandbox.env');
}

/** A POSIX shell word that stands for `value` exactly. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export interface EnvLogin {
  readonly lender: string;
  readonly email: string;
  readonly password: string;
}

/** The variables the lines set, in their order. */
const PRINTED = [ENV.authUrl, ENV.lender, ENV.email, ENV.password, ENV.caFile];

export function exportLines(authUrl: string, login: EnvLogin, caFile: string): string {
  const values = [authUrl, login.lender, login.email, login.password, caFile];
  return PRINTED.map((name, i) => `export ${name}=${shellQuote(values[i]!)}\n`).join('');
}

/** The line that takes back what exportLines set: printed when a sandbox whose lines went into a
 * pipe stops. */
export function unsetLine(): string {
  return `unset ${PRINTED.join(' ')}\n`;
}

// The first line names the process (its pid, and where the OS gives them its start time and the
// boot it runs in), so a file left by one that died is known as stale, also once a reboot or a
// restarted container gave its pid to another process.
const HEADER = /^# lender sandbox pid (\d+)(?: start (\d+))?(?: boot ([\w-]+))? at (\S+)\n/;

export async function writeEnvFile(path: string, authUrl: string, lines: string): Promise<void> {
  await makeFolder(dirname(path));
  const handle = await openPrivate(path, 'w');
  const { processStart, bootId } = selfIdentity();
  const identity = `${processStart === undefined ? '' : ` start ${processStart}`}${bootId === undefined || !/^[\w-]+$/.test(bootId) ? '' : ` boot ${bootId}`}`;
  try {
    await handle.writeFile(`# lender sandbox pid ${process.pid}${identity} at ${authUrl}\n${lines}`);
  } finally {
    await handle.close();
  }
}

/** The lines of a sandbox that runs now, or undefined (no file, or one its process left). */
export async function readRunningEnv(path: string): Promise<{ pid: number; authUrl: string; lines: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  const header = HEADER.exec(text);
  if (header === null) return undefined;
  const pid = Number(header[1]);
  const identity = {
    ...(header[2] !== undefined && { processStart: Number(header[2]) }),
    ...(header[3] !== undefined && { bootId: header[3] }),
  };
  if (pid === process.pid || pid <= 0 || !stillRunning(pid, identity)) return undefined;
  return { pid, authUrl: header[4]!, lines: text.slice(header[0].length) };
}

/** Removes the file if it is still this process's (another sandbox may have taken it over). */
export async function removeEnvFile(path: string): Promise<void> {
  const text = await readFile(path, 'utf8').catch(() => '');
  if (HEADER.exec(text)?.[1] === String(process.pid)) await rm(path, { force: true });
}
