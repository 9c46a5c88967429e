// `lender --help`, every sub-command's `--help` and `lender --version` are accurate: each help
// lists the flags of the CLI contract (docs/cli.md), every flag a help lists is one the command
// really accepts, and the command list of `lender --help` matches the commands themselves.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { Command } from '../../src/cli/command.ts';
import { main } from '../../src/cli/main.ts';
import { memoryIo } from '../helpers/memory-io.ts';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; bin: { lender: string } };
/** The installed entry point: the file package.json names as the `lender` command. */
const BIN = fileURLToPath(new URL(`../../${pkg.bin.lender}`, import.meta.url));

const CONNECTION = ['--sandbox', '--auth-url', '--lender', '--email', '--password-file', '--ca-file'];

// Flags each command must document: the CLI contract (docs/cli.md) plus the connection flags of
// the client commands. A flag dropped from a help text (or from the contract) fails here.
const EXPECTED: Record<string, string[]> = {
  sandbox: ['--port', '--host', '--seed', '--scale', '--latency', '--faults', '--token-ttl', '--total-cap', '--via-budget', '--churn'],
  catalog: ['--json', ...CONNECTION],
  export: ['--since', '--until', '--window', '--limit', '--sort', '--state', '--progress', ...CONNECTION],
  sync: ['--out', '--datasets', '--state', ...CONNECTION],
  push: ['--format', '--batch-size', '--rejects', ...CONNECTION],
  flag: CONNECTION,
  repl: CONNECTION,
  demo: ['--out', '--records'],
};

const ENV_VARS = ['LENDER_AUTH_URL', 'LENDER_SUBDOMAIN', 'LENDER_EMAIL', 'LENDER_PASSWORD', 'LENDER_CA_FILE'];
const CLIENT_COMMANDS = ['catalog', 'export', 'sync', 'push', 'flag', 'repl'];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(argv: string[]): Promise<Run> {
  // No credentials anywhere, so nothing can log in even if a command got past its arguments.
  const io = memoryIo({ LENDER_CREDENTIALS_FILE: '/nonexistent/lender-credentials.json', HOME: '/nonexistent' });
  const code = await main(argv, io);
  return { code, stdout: io.out(), stderr: io.err() };
}

/** Flags a help text lists as options: lines that start with a flag. */
function listedFlags(help: string): string[] {
  const flags = new Set<string>();
  for (const m of help.matchAll(/^ {2,}(--[a-z][a-z0-9-]*)/gm)) flags.add(m[1]!);
  return [...flags].sort();
}

async function loadCommand(name: string): Promise<Command & { OPTIONS?: Record<string, unknown> }> {
  const mod = (await import(`../../src/cli/commands/${name}.ts`)) as { default: Command; OPTIONS?: Record<string, unknown>; options?: Record<string, unknown> };
  return { ...mod.default, run: mod.default.run, ...((mod.OPTIONS ?? mod.options) && { OPTIONS: mod.OPTIONS ?? mod.options }) };
}

// Loaded up front so the tests below can be declared per command; commands that export their
// parseArgs table (OPTIONS) get an exact cross-check, the others are probed flag by flag.
const COMMANDS = new Map(await Promise.all(Object.keys(EXPECTED).map(async (name) => [name, await loadCommand(name)] as const)));

describe('lender --help and --version', () => {
  it('--version and -v print the package version', async () => {
    for (const flag of ['--version', '-v']) {
      const r = await run([flag]);
      assert.equal(r.code, 0);
      assert.equal(r.stdout, `${pkg.version}\n`);
    }
  });

  it('the installed entry point (package.json\'s bin) prints the version and the help', () => {
    const version = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout, `${pkg.version}\n`);
    const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^Usage: lender <command>/);
  });

  it('the installed entry point gives libuv\'s pool 2 threads where Node cannot start again (Node 20), unless the user set a size', (t) => {
    // Read as the process exits: the size in its environment, and its threads (the pool's among them).
    const dir = mkdtempSync(join(tmpdir(), 'lender-pool-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const probe = join(dir, 'probe.cjs');
    writeFileSync(probe, `process.on('exit', () => process.stderr.write('POOL ' + JSON.stringify({
      size: process.env.UV_THREADPOOL_SIZE ?? null, threads: require('node:fs').readdirSync('/proc/self/task').length })));`);
    const { UV_THREADPOOL_SIZE: _given, ...env } = process.env;
    const pool = (extra: Record<string, string>): { size: string | null; threads: number } => {
      const r = spawnSync(process.execPath, ['--require', probe, BIN, '--version'], { encoding: 'utf8', env: { ...env, ...extra } });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(/POOL (.*)$/m.exec(r.stderr)![1]!) as { size: string | null; threads: number };
    };
    const own = pool({});
    const four = pool({ UV_THREADPOOL_SIZE: '4' });
    assert.equal(four.size, '4', 'a size the user gave is kept');
    if (typeof (process as { execve?: unknown }).execve === 'function') {
      assert.deepEqual(own, { size: null, threads: four.threads }, 'left alone where the commands start Node again');
    } else {
      assert.equal(own.size, '2');
      assert.equal(four.threads - own.threads, 2, 'two pool threads fewer: the size was set before the pool started');
    }
  });

  it('--help lists every command with the summary the command itself gives', async () => {
    const r = await run(['--help']);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
    for (const name of Object.keys(EXPECTED)) {
      const command = await loadCommand(name);
      assert.equal(command.name, name);
      const line = new RegExp(`^ {2}${name} +(.+)$`, 'm').exec(r.stdout);
      assert.ok(line, `lender --help lists ${name}`);
      assert.equal(line[1], command.summary, `summary of ${name}`);
    }
    for (const v of ENV_VARS) assert.match(r.stdout, new RegExp(v));
    assert.match(r.stdout, /--sandbox/);
  });

  it('no command exits 2 with one line naming the commands; an unknown command exits 2, naming the command a typo most likely meant', async () => {
    const none = await run([]);
    assert.equal(none.code, 2);
    assert.equal(none.stdout, '');
    assert.equal(none.stderr,
      `lender: a command is needed: ${Object.keys(EXPECTED).slice(0, -1).join(', ')} or ${Object.keys(EXPECTED).at(-1)}. Run 'lender --help' for more.\n`);
    const unknown = await run(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, "lender: unknown command 'frobnicate'. Run 'lender --help' for the list.\n");
    // Names every object has are unknown commands too, not a crash.
    for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      const r = await run([name]);
      assert.equal(r.code, 2, name);
      assert.match(r.stderr, new RegExp(`^lender: unknown command '${name}'[.;]`), name);
    }
    for (const [typed, meant] of [['exprot', 'export'], ['snyc', 'sync'], ['rep', 'repl'], ['catlog', 'catalog']]) {
      const typo = await run([typed]);
      assert.equal(typo.code, 2);
      assert.equal(typo.stderr, `lender: unknown command '${typed}'; did you mean ${meant}? Run 'lender --help' for the list.\n`);
    }
    // Before a command, an option is one of --help and --version.
    for (const [typed, meant] of [['--verison', '--version'], ['--hepl', '--help'], ['-vesion', '--version']]) {
      const typo = await run([typed]);
      assert.equal(typo.code, 2);
      assert.equal(typo.stdout, '');
      assert.equal(typo.stderr, `lender: unknown option '${typed}'; did you mean ${meant}? Run 'lender --help' for the list.\n`);
    }
    const option = await run(['--sandbox', 'push']);
    assert.equal(option.code, 2);
    assert.equal(option.stderr,
      "lender: unknown option '--sandbox' before a command; its options go after its name: lender <command> --sandbox. Run 'lender --help' for the list.\n");
  });

  for (const [name, expected] of Object.entries(EXPECTED)) {
    describe(`lender ${name} --help`, () => {
      it('exits 0, starts with its usage line and lists the contract flags', async () => {
        for (const flag of ['--help', '-h']) {
          const r = await run([name, flag]);
          assert.equal(r.code, 0, r.stderr);
          assert.equal(r.stderr, '');
          assert.match(r.stdout, new RegExp(`^Usage: lender ${name}\\b`));
          const listed = listedFlags(r.stdout);
          for (const f of expected) assert.ok(listed.includes(f), `lender ${name} --help lists ${f} (lists ${listed.join(' ')})`);
          assert.match(r.stdout, /^ {2}-h, --help +this text$/m, `lender ${name} --help lists -h, --help`);
        }
        const command = await loadCommand(name);
        assert.equal(command.help.trimEnd() + '\n', (await run([name, '--help'])).stdout);
      });

      it('every flag it lists is accepted by the command', async () => {
        const command = await loadCommand(name);
        const listed = listedFlags(command.help);
        assert.ok(listed.length > 0);
        // A sentinel unknown option after the flag: the command stops at argument parsing either
        // way (nothing runs), and the error names the first option it does not know.
        for (const flag of listed) {
          const r = await run([name, flag, '--zz-not-an-option']);
          assert.equal(r.code, 2, `lender ${name} ${flag}: ${r.stderr}`);
          assert.doesNotMatch(r.stderr, new RegExp(`unknown option ${flag}\\b`), `lender ${name} accepts ${flag}`);
        }
        const bogus = await run([name, '--zz-not-an-option']);
        assert.equal(bogus.code, 2);
        assert.match(bogus.stderr, /--zz-not-an-option/, 'the probe above can tell an unknown flag');
      });

      const exported = COMMANDS.get(name)?.OPTIONS;
      if (exported !== undefined) {
        it('lists exactly the options its argument parser accepts (the exported OPTIONS)', () => {
          const command = COMMANDS.get(name)!;
          const accepted = Object.keys(exported).map((k) => `--${k}`).sort();
          assert.deepEqual(listedFlags(command.help), accepted);
        });
      }

      if (CLIENT_COMMANDS.includes(name)) {
        it('documents the credential environment variables', async () => {
          const r = await run([name, '--help']);
          for (const v of ENV_VARS) assert.match(r.stdout, new RegExp(v), `${name} --help names ${v}`);
        });
      }
    });
  }
});
