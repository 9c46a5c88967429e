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
