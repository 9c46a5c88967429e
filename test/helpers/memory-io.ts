// A CommandIo that keeps what a command prints, for running `lender` sub-commands in-process.
import { PassThrough } from 'node:stream';
import type { CommandIo } from '../../src/cli/command.ts';

export interface MemoryIo extends CommandIo {
  out(): string;
  err(): string;
}

export function memoryIo(env: NodeJS.ProcessEnv = {}, signal: AbortSignal = new AbortController().signal): MemoryIo {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  stdin.end();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d));
  stderr.on('data', (d: Buffer) => (err += d));
  return { stdout, stderr, stdin, env, signal, out: () => out, err: () => err };
}

/** Runs `lender ARGV` in-process with `env`; what it printed and its exit code. */
export async function runLender(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; err: string }> {
  const { main } = await import('../../src/cli/main.ts');
  const io = memoryIo(env);
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
}
