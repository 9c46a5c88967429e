// Drives an interactive child process: write a line, wait until the output shows something.
// Waits have a generous deadline only so a broken REPL fails the test instead of hanging it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '').replace(/\r/g, '');
}

export class Driver {
  readonly child: ChildProcess;
  #raw = '';
  #consumed = 0;
  #exit: Promise<number | null>;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string) {
    this.child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => { this.#raw += d; });
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => { this.#raw += d; });
    this.#exit = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** Everything printed so far, without terminal escapes. */
  get output(): string {
    return stripAnsi(this.#raw);
  }

  /** The lines a terminal would show for what was printed so far: a carriage return, a move to
   * column 1 or an erase of the line starts the line again (enough for readline's redraws). */
  get screenLines(): string[] {
    return this.#raw.split(/\r?\n/).map((line) => stripAnsi(line.split(/\r|\x1b\[(?:1|0)?G|\x1b\[2K/).at(-1) ?? ''));
  }

  write(text: string): void {
    this.child.stdin!.write(text);
  }

  /** Closes stdin, as the end of a piped script does. */
  endInput(): void {
    this.child.stdin!.end();
  }

  /** Resolves with the output since the last wait once `pattern` shows up in it. */
  async waitFor(pattern: RegExp, what: string, deadlineMs = 60_000): Promise<string> {
    const started = Date.now();
    for (;;) {
      const fresh = this.output.slice(this.#consumed);
      const m = pattern.exec(fresh);
      if (m !== null) {
        this.#consumed += m.index + m[0].length;
        return fresh.slice(0, m.index + m[0].length);
      }
      if (this.child.exitCode !== null || Date.now() - started > deadlineMs) {
        throw new Error(`never saw ${what}; output so far:\n${this.output.slice(-3000)}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  exited(): Promise<number | null> {
    return this.#exit;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** util-linux `script`, which runs a command on a real pseudo-terminal. */
export function scriptAvailable(): boolean {
  const r = spawnSync('script', ['--version'], { encoding: 'utf8' });
  return r.status === 0 && /util-linux/.test(`${r.stdout}${r.stderr}`);
}

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
