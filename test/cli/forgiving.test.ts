// The `lender` command forgives and says what to do: an unknown flag names the closest known one,
// --password points to --password-file, and the exit codes follow one rule (usage and
// configuration mistakes 2, runtime failures 1, rejected records 3, interrupted 130). Every case
// spawns the real CLI (bin/lender.mjs), against an embedded sandbox where it connects.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { runProcess, type ProcessResult } from '../helpers/run-process.ts';

const BIN = fileURLToPath(new URL('../../bin/lender.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'lender-forgiving-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** No credentials anywhere: only --sandbox connects. */
function isolatedEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, LENDER_CREDENTIALS_FILE: join(dir, 'none.json'), ...extra };
  for (const k of ['LENDER_AUTH_URL', 'LENDER_SUBDOMAIN', 'LENDER_EMAIL', 'LENDER_PASSWORD', 'LENDER_CA_FILE', 'LENDER_DEBUG']) {
    if (!(k in extra)) delete env[k];
  }
  return env;
}

function lender(args: string[], env = isolatedEnv()): Promise<ProcessResult> {
  return runProcess(process.execPath, [BIN, ...args], { env, cwd: dir, timeoutMs: 120_000 });
}

describe('an unknown flag', () => {
  it('gets one line naming the closest known flag, exit 2, nothing on stdout', async () => {
    for (const [args, line] of [
      [['export', 'D07', '--sinse', '2026-01-01T00:00:00Z'], 'lender export: unknown option --sinse; did you mean --since?'],
      [['sync', '--dataset', 'D07'], 'lender sync: unknown option --dataset; did you mean --datasets?'],
      [['push', '--batchsize', '10'], 'lender push: unknown option --batchsize; did you mean --batch-size?'],
      [['catalog', '--jsn'], 'lender catalog: unknown option --jsn; did you mean --json?'],
      [['export', 'D07', '--conc', '2'], 'lender export: unknown option --conc; did you mean --concurrency?'],
      [['sandbox', '--prot', '0'], 'lender sandbox: unknown option --prot; did you mean --port?'],
    ] as const) {
      const r = await lender([...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, `${line}\n`);
      assert.doesNotMatch(r.stderr, /positional/);
    }
  });

  it('with no close match: the flag named and a pointer to --help, never Node\'s text about positional arguments', async () => {
    const r = await lender(['export', 'D07', '--frobnicate']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "lender export: unknown option --frobnicate\nRun 'lender export --help' for usage.\n");
  });

  it('--password points to --password-file and LENDER_PASSWORD, and never repeats the value', async () => {
    for (const args of [['catalog', '--password=hunter2-do-not-echo'], ['push', '--password', 'hunter2-do-not-echo'], ['repl', '--password', 'x'],
      ['export', 'D07', '--pasword=hunter2-do-not-echo'], ['sync', '--passowrd', 'hunter2-do-not-echo'], ['push', '--PASSWORD', 'hunter2-do-not-echo'],
      ['push', '--passwor', 'hunter2-do-not-echo'], ['push', '--Pass', 'hunter2-do-not-echo'], ['catalog', '--pas', 'hunter2-do-not-echo']]) {
      const r = await lender(args);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
      const flag = args.find((a) => a.startsWith('--'))!.split('=')[0]!;
      assert.match(r.stderr, new RegExp(`^lender ${args[0]}: there is no ${flag} flag.*--password-file FILE.*LENDER_PASSWORD\\n$`));
      assert.doesNotMatch(r.stderr, /hunter2/);
    }
    // A typo nearer a real flag is that flag's; a short unknown one is not taken for a password.
    for (const [args, said] of [[['sync', '--pease', '1m'], 'did you mean --lease?'], [['sync', '--tw', 'x'], 'did you mean --to?'], [['push', '--pages', '3'], "Run 'lender push --help'"]] as const) {
      const r = await lender([...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.ok(r.stderr.includes(said), r.stderr);
      assert.doesNotMatch(r.stderr, /password/);
    }
  });

  it('a flag without its value, a value for a switch, an extra argument: our words, exit 2', async () => {
    const cases = [
      [['export', 'D07', '--since'], 'lender export: --since needs a value'],
      [['catalog', '--json=yes'], 'lender catalog: --json takes no value'],
      [['catalog', 'extra'], "lender catalog: unexpected argument 'extra': this command takes only options"],
      // The sandbox's own bounds, checked with the flag rather than after the prompt shows.
      [['repl', '--sandbox', '--scale', '99999999999'], "lender repl: --scale must be a whole number from 1 to 10000000, not '99999999999'"],
      [['repl', '--sandbox', '--seed', '4294967296'], "lender repl: --seed must be a whole number from 0 to 2147483647, not '4294967296'"],
    ] as const;
    for (const [args, first] of cases) {
      const r = await lender([...args]);
      assert.equal(r.code, 2);
      assert.equal(r.stderr.split('\n')[0], first);
    }
  });
});

describe('an unknown dataset code', () => {
  it('is named with the codes there are, the missing one said, before any connection (exit 2)', async () => {
    for (const [args, line] of [
      [['export', 'D25'], "lender export: unknown dataset 'D25'; codes run D01 to D26 (D25 does not exist); see 'lender catalog'"],
      [['sync', '--datasets', 'D07,D99'], "lender sync: unknown dataset in --datasets 'D99'; codes run D01 to D26 (D25 does not exist); see 'lender catalog'"],
    ] as const) {
      const r = await lender([...args]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, `${line}\nRun 'lender ${args[0]} --help' for usage.\n`);
    }
  });
});

describe('exit codes: one rule', () => {
  it('lender --help states the rule', async () => {
    const r = await lender(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Exit codes: 0 success; 1 runtime failure \(network, login, server, unreadable input file\);\n2 usage or configuration mistake .*; 3 some records rejected .*\n.*130 interrupted/);
  });

  it('--since not before --until is a usage error (2), not an empty export', async () => {
    for (const [since, until] of [['2026-02-01T00:00:00Z', '2026-01-01T00:00:00Z'], ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000Z']]) {
      const r = await lender(['export', 'D07', '--sandbox', '--since', since, '--until', until]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, new RegExp(`^lender export: --since ${since} must be before --until ${until}\\n`));
    }
    // A real range still exports its rows.
    const ok = await lender(['export', 'D07', '--sandbox', '--since', '2000-01-01T00:00:00Z', '--until', '2100-01-01T00:00:00Z', '--window', 'none']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout.trimEnd().split('\n').length, 1000);
  });

  it('configuration mistakes are 2: an http:// URL, missing credentials, an unreadable password file', async () => {
    const http = await lender(['catalog'], isolatedEnv({
      LENDER_AUTH_URL: 'http://127.0.0.1:9', LENDER_SUBDOMAIN: 'demo', LENDER_EMAIL: 'a@b.c', LENDER_PASSWORD: 'pw-never-shown',
    }));
    assert.equal(http.code, 2, http.stderr);
    assert.match(http.stderr, /^lender catalog: The auth URL http:\/\/127\.0\.0\.1:9 is refused .*HTTPS/);
    assert.doesNotMatch(http.stderr, /pw-never-shown/);
    const none = await lender(['export', 'D07']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^lender export: no credentials: .*--sandbox/);
    // The REPL says the same, and says it before any "logging in".
    const repl = await lender(['repl']);
    assert.equal(repl.code, 2, repl.stderr);
    assert.equal(repl.stderr, none.stderr.replaceAll('lender export', 'lender repl'));
    const file = await lender(['catalog', '--auth-url', 'https://127.0.0.1:9', '--lender', 'demo', '--email', 'a@b.c', '--password-file', join(dir, 'absent')]);
    assert.equal(file.code, 2);
    assert.match(file.stderr, /^lender catalog: Could not read the password file .*absent \(ENOENT\)\.\n$/);
  });

  it('lender sync with settings that cannot connect creates nothing: no database file, no folder', async () => {
    const cwd = mkdtempSync(join(dir, 'sync-'));
    const run = (args: string[], env = isolatedEnv()) => runProcess(process.execPath, [BIN, 'sync', ...args], { env, cwd, timeoutMs: 120_000 });
    const none = await run([]);
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /^lender sync: no credentials: .*--sandbox/);
    const http = await run(['--to', 'duckdb:out/x.duckdb', '--datasets', 'D07'], isolatedEnv({
      LENDER_AUTH_URL: 'http://127.0.0.1:9', LENDER_SUBDOMAIN: 'demo', LENDER_EMAIL: 'a@b.c', LENDER_PASSWORD: 'pw-never-shown',
    }));
    assert.equal(http.code, 2, http.stderr);
    const ndjson = await run(['--out', 'files']);
    assert.equal(ndjson.code, 2, ndjson.stderr);
    const reopen = await run(['--to', 'duckdb:out/x.duckdb', '--datasets', 'D07', '--sandbox'], isolatedEnv({ LENDER_DUCKDB_REOPEN_ROWS: '1e5' }));
    assert.equal(reopen.code, 2, reopen.stderr);
    assert.equal(reopen.stderr, 'lender sync: LENDER_DUCKDB_REOPEN_ROWS must be a whole number of rows (0: never reopen); got "1e5"\n');
    const huge = await run(['--to', 'duckdb:out/x.duckdb', '--datasets', 'D07', '--sandbox'], isolatedEnv({ LENDER_DUCKDB_REOPEN_ROWS: '99999999999999999999' }));
    assert.equal(huge.code, 2, huge.stderr);
    assert.match(huge.stderr, /^lender sync: LENDER_DUCKDB_REOPEN_ROWS must be a whole number of rows \(0: never reopen\); got "99999999999999999999"\n$/);
    assert.deepEqual(readdirSync(cwd), []);
  });

  it('runtime failures are 1: an input file that cannot be read', async () => {
    const r = await lender(['push', join(dir, 'no-such.ndjson'), '--sandbox']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^lender push: cannot read .*no-such\.ndjson \(ENOENT\)\n$/);
  });

  it('rejected records are 3, and a status reject names the words accepted too', async () => {
    const flags = join(dir, 'flags.ndjson');
    writeFileSync(flags, `${JSON.stringify({ status: 'dispute', debtorCompanyId: 'C-1', accountId: 'A-1' })}\n`);
    const flagRun = await lender(['flag', flags, '--sandbox']);
    assert.equal(flagRun.code, 3, flagRun.stderr);
    assert.match(flagRun.stderr, /^lender flag: line 1 rejected \(invalid\): Invalid status value\. Accepted values: 5, 6 \(or "disputed", "doNotContact"\)$/m);
    const accounts = join(dir, 'accounts.ndjson');
    writeFileSync(accounts, `${JSON.stringify({ status: 'delete', debtorCompanyId: 'C-1', accountId: 'A-1' })}\n`);
    const pushRun = await lender(['push', accounts, '--sandbox']);
    assert.equal(pushRun.code, 3, pushRun.stderr);
    assert.match(pushRun.stderr, /Invalid status value\. Accepted values: 1, 2, 3 \(or "create", "update", "withdraw"\)/);
  });

  it('interrupted is 130: Ctrl-C while push waits for its input', async () => {
    const child = spawn(process.execPath, [BIN, 'push', '-', '--sandbox'], { env: isolatedEnv(), cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const exited = new Promise<number | null>((resolveExit) => child.on('close', (code) => resolveExit(code)));
    // Connected once it names the sandbox; stdin stays open, so push is still reading.
    await new Promise<void>((resolveConnected, reject) => {
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        if (stderr.includes('using an embedded sandbox')) resolveConnected();
      });
      child.once('close', () => reject(new Error(`push ended before it connected: ${stderr}`)));
    });
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.equal(JSON.parse(stdout).stopped, true);
    child.stdin.destroy();
  });
});

describe('progress on a stderr that is not a terminal', () => {
  it('a line per change, never the same line twice', async () => {
    const flags = join(dir, 'progress-flags.ndjson');
    writeFileSync(flags, [1, 2, 3].map((i) => JSON.stringify({ status: 5, debtorCompanyId: 'P-1', accountId: `P-${i}` })).join('\n'));
    const r = await lender(['flag', flags, '--sandbox', '--progress', '--batch-size', '1', '--concurrency', '1', '--rejects', join(dir, 'progress.rejects')]);
    assert.equal(r.code, 3, r.stderr);
    const progress = r.stderr.split('\n').filter((l) => l.startsWith('flag: '));
    assert.ok(progress.length >= 1, r.stderr);
    const figures = progress.map((l) => l.replace(/, \d+ records\/s$/, ''));
    for (let i = 1; i < figures.length; i++) assert.notEqual(figures[i], figures[i - 1], `repeated: ${figures[i]}`);
    assert.equal(figures.at(-1), 'flag: 3 read, 0 accepted, 3 rejected, 3 requests, 0 retries');
  });
});
