// `lender repl --sandbox` end to end: on a real pseudo-terminal (util-linux `script`) and with
// piped stdin. Evaluates helpers, runs dot-commands, interrupts a slow call with Ctrl-C, and checks
// the history file: written as lines are accepted, mode 0600, no password or token in it.
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { Driver, scriptAvailable, shellQuote } from './driver.ts';

const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
const BIN = join(ROOT, 'bin', 'lender.mjs');
const PROMPT = /lender> $/m;

const homes: string[] = [];
after(() => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

/** A fresh HOME (removed after the file) and the REPL's environment in it. */
function freshHome(): { home: string; env: NodeJS.ProcessEnv } {
  const home = mkdtempSync(join(tmpdir(), 'lender-repl-test-'));
  homes.push(home);
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, LENDER_REPL_HISTORY: join(home, 'state', 'repl_history'), TERM: 'xterm' };
  for (const k of ['LENDER_AUTH_URL', 'LENDER_SUBDOMAIN', 'LENDER_EMAIL', 'LENDER_PASSWORD', 'LENDER_DEBUG', 'XDG_STATE_HOME']) delete env[k];
  return { home, env };
}

/** `lender repl --sandbox` with piped stdin in a fresh HOME, killed once `body` is done. */
async function withPipedRepl(body: (d: Driver, env: NodeJS.ProcessEnv, home: string) => Promise<void>): Promise<void> {
  const { home, env } = freshHome();
  const d = new Driver(process.execPath, [BIN, 'repl', '--sandbox'], env, home);
  try {
    await body(d, env, home);
  } finally {
    d.kill();
  }
}

/** Reads the demo password from inside the REPL, reversed (what the REPL prints is scrubbed of
 * it; the line itself is filtered from history), and checks that console.log and console.error
 * print it as [redacted]. */
async function demoPassword(d: Driver, enter: string): Promise<string> {
  d.write(`console.log('PW<' + [...session.knownSecrets()[0]].reverse().join('') + '>')${enter}`);
  const seen = await d.waitFor(/PW<([^>\s]+)>/, 'the password marker');
  const pw = [.../PW<([^>\s]+)>/.exec(seen)![1]!].reverse().join('');
  assert.ok(pw.length >= 12);
  for (const method of ['log', 'error']) {
    d.write(`console.${method}('${method}<' + session.knownSecrets()[0] + '>')${enter}`);
    const printed = await d.waitFor(new RegExp(`${method}<([^>\\s]+)>`), `console.${method}'s line`);
    assert.match(printed, new RegExp(`${method}<\\[redacted\\]>`));
  }
  assert.ok(!d.output.includes(pw), 'the REPL printed the password');
  return pw;
}

function checkHistory(file: string, password: string, mustHave: string[]): void {
  const st = statSync(file);
  assert.equal(st.mode & 0o777, 0o600, `history mode is ${(st.mode & 0o777).toString(8)}`);
  const text = readFileSync(file, 'utf8');
  for (const line of mustHave) assert.ok(text.includes(line), `history lacks ${line}:\n${text}`);
  assert.ok(!text.includes(password), 'the password reached the history file');
  assert.ok(!/eyJ[A-Za-z0-9_-]{6,}\./.test(text), 'a JWT reached the history file');
  assert.ok(!/knownSecrets|password/i.test(text), 'a sensitive-looking line reached the history file');
}

describe('lender repl --sandbox on a pseudo-terminal', () => {
  it('evaluates helpers and commands, stops a slow call on Ctrl-C, keeps a clean 0600 history', async () => {
    await withTerminalRepl(async (d, env) => {
      // The banner comes while the first prompt shows: it takes that line, and the prompt is
      // drawn again below it.
      const banner = d.screenLines.find((l) => l.includes('Connected as demo'));
      assert.match(banner ?? '', /^Connected as demo/);

      d.write(`await rows('D07', {limit: 3})\r`);
      const rows = await d.waitFor(/3 rows of D07[\s\S]*?lender> /, 'three D07 rows');
      assert.match(rows, /payment_status/);
      assert.equal(rows.match(/PAID_TO_LENDER/g)?.length, 3);

      // History is written as lines are accepted, not at exit.
      const historyFile = env.LENDER_REPL_HISTORY!;
      assert.match(readFileSync(historyFile, 'utf8'), /await rows\('D07', \{limit: 3\}\)/);

      d.write('.datasets\r');
      const datasets = await d.waitFor(/D26\s+User Lender Details[^\n]*\n[\s\S]*?lender> /, 'the dataset list');
      assert.match(datasets, /D04\s+Borrower Account Debt Logs\s+created_at\s+false/);

      d.write('.whoami\r');
      await d.waitFor(/lender: 'demo'[\s\S]*?lender> /, 'whoami');

      const password = await demoPassword(d, '\r');
      d.write(`const typed = '${password}'\r`);
      await d.waitFor(PROMPT, 'prompt after the password line');
      d.write(`const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZW1vIn0.c2lnbmF0dXJl'\r`);
      await d.waitFor(PROMPT, 'prompt after the token line');

      // Errors are one line; the stack is there on request.
      d.write(`await rows('D04')\r`);
      const err = await d.waitFor(/DatasetUnavailableError[^\n]*\n/, 'a one-line error');
      assert.match(err, /\(\.stack for details\)/);
      assert.doesNotMatch(err, /^\s+at /m);
      d.write('.stack\r');
      await d.waitFor(/\n\s+at [^\n]+\n[\s\S]*?lender> /, 'the stack');

      // Ctrl-C while a call is in flight: the call is aborted, the REPL stays.
      d.write('sandbox.setFaults({latencyMs: 30000}); 0\r');
      await d.waitFor(PROMPT, 'prompt after slowing the sandbox');
      d.write(`p = rows('D07', {limit: 1}); await p\r`);
      await d.waitFor(/await p\n/, 'the echo of the slow call');
      d.write('\x03');
      await d.waitFor(/Interrupted[^\n]*\n/, 'the interrupt message');
      d.write(`sandbox.setFaults({latencyMs: 0}); await p.then(() => 'finished', (e) => e.name)\r`);
      await d.waitFor(/'AbortError'/, 'the slow call to have been aborted');
      d.write(`await count('D07')\r`);
      await d.waitFor(/D07: 1,000 rows/, 'a call after the interrupt');

      // Ctrl-C stops a query too (DuckDB interrupts it); the database answers the next one.
      d.write(`(await sync(['D07'], { to: 'duckdb:q.duckdb' })).datasets.D07.rows\r`);
      await d.waitFor(/\n1000\r?\n[\s\S]*?lender> /, 'the sync into q.duckdb');
      d.write(`await sql('SELECT count(*) AS n FROM range(1000000000000)', { database: 'q.duckdb' })\r`);
      await d.waitFor(/range\(1000000000000\)[^\n]*\n/, 'the echo of the endless query');
      d.write('\x03');
      await d.waitFor(/Interrupted[^\n]*\n/, 'the interrupt message for the query');
      d.write(`(await sql('SELECT count(*) AS n FROM d07', { database: 'q.duckdb' }))[0].n\r`);
      await d.waitFor(/\n1000\r?\n[\s\S]*?lender> /, 'a query after the interrupt');

      d.write('.exit\r');
      assert.equal(await d.exited(), 0);
      checkHistory(historyFile, password, ["await rows('D07', {limit: 3})", '.datasets', '.whoami', "await count('D07')",
        "(await sync(['D07'], { to: 'duckdb:q.duckdb' })).datasets.D07.rows", "await sql('SELECT count(*) AS n FROM range(1000000000000)', { database: 'q.duckdb' })",
        "(await sql('SELECT count(*) AS n FROM d07', { database: 'q.duckdb' }))[0].n", '.exit']);
    });
  });
});

/** `lender repl --sandbox` on a pseudo-terminal in a fresh HOME, killed once `body` is done. */
async function withTerminalRepl(body: (d: Driver, env: NodeJS.ProcessEnv) => Promise<void>): Promise<void> {
  // Fails (not skips) without util-linux `script`: .ci/run runs on machines that have it.
  assert.ok(scriptAvailable(), 'util-linux `script` is needed to give the REPL a real terminal');
  const { home, env } = freshHome();
  const command = `stty cols 250 rows 60; exec ${shellQuote(process.execPath)} ${shellQuote(BIN)} repl --sandbox`;
  const d = new Driver('script', ['-qfec', command, '/dev/null'], env, home);
  try {
    await d.waitFor(/Connected as demo/, 'the connected banner');
    await d.waitFor(PROMPT, 'the prompt');
    await body(d, env);
  } finally {
    d.kill();
  }
}

describe('lender repl --sandbox on a pseudo-terminal, more', () => {
  it('shows no inline preview of a value while it is typed (it would show the password)', () =>
    withTerminalRepl(async (d) => {
      d.write('var pw = session.knownSecrets()[0]\r');
      await d.waitFor(PROMPT, 'the prompt after the assignment');
      const password = await demoPassword(d, '\r');
      // Node draws its preview as each key is handled; the Enter comes only once the keys have
      // been echoed, so a preview would be on the screen before it.
      d.write('pw');
      await d.waitFor(/pw/, 'the echo of the typed name');
      d.write('\r');
      await d.waitFor(/\[redacted\][^\n]*\n[\s\S]*?lender> /, 'the value, redacted');
      assert.ok(!d.output.includes(password), 'the password showed on the terminal');
      d.write('\x04');
      assert.equal(await d.exited(), 0, d.output);
    }));

  it('Ctrl-C stops a synchronous endless loop and the REPL goes on; Ctrl-C twice then exits 0', () =>
    withTerminalRepl(async (d) => {
      // The marker is printed from inside the evaluation: the loop is running once it shows.
      d.write(`console.log('loop' + 'ing:' + 1); while (true) {}\r`);
      await d.waitFor(/looping:1/, 'the loop to start');
      d.write('\x03');
      await d.waitFor(/Interrupted[^\n]*\n[\s\S]*?lender> /, 'the interrupt message and the prompt');
      d.write('6 * 7\r');
      await d.waitFor(/\n42\r?\n/, 'an evaluation after the interrupt');
      // At an empty prompt, Ctrl-C twice leaves the REPL, as in Node's own.
      d.write('\x03');
      await d.waitFor(/press Ctrl\+C again/, 'the hint to press Ctrl-C again');
      d.write('\x03');
      assert.equal(await d.exited(), 0, d.output);
    }));
});

describe('lender repl --sandbox with piped stdin', () => {
  it('evaluates, lists datasets, exits, and leaves a 0600 history without secrets', () =>
    withPipedRepl(async (d, env) => {
      await d.waitFor(/Connected as demo/, 'the connected banner');
      d.write(`await rows('D07', {limit: 3})\n`);
      const rows = await d.waitFor(/3 rows of D07[\s\S]*?lender> /, 'three D07 rows');
      assert.equal(rows.match(/PAID_TO_LENDER/g)?.length, 3);
      d.write('.datasets\n');
      await d.waitFor(/D26\s+User Lender Details/, 'the dataset list');
      const password = await demoPassword(d, '\n');
      d.write(`login({ password: '${password}' })\n`);
      await d.waitFor(/ReferenceError: login is not defined/, 'the error for the password line');
      d.write('1 + 41\n');
      await d.waitFor(/42/, 'a plain evaluation');
      // Helpers print under their own names (also in stacks), not as anonymous wrappers.
      d.write('[rows, stream, whoami, table]\n');
      await d.waitFor(/\[AsyncFunction: rows\],\s+\[Function: stream\],\s+\[Function: whoami\],\s+\[Function: table\]\s*\]/, 'the helpers by name');
      // describe, sql and chart's forms, as text in the REPL.
      d.write(`await describe('D07', { sample: 5 })\n`);
      await d.waitFor(/D07 Borrower Payments: [\d,]+ rows, updated_at from \S+ to \S+; fields of the first 5 rows:\nfield\s+type\s+nulls\s+distinct\n[\s\S]*?payment_status\s+text\s+0\.0%/, 'the description of D07');
      d.write(`await sql('SELECT 1')\n`);
      await d.waitFor(/There is no DuckDB database at \S+lender\.duckdb; sync into it first/, 'the one-line error of sql() without a database');
      d.write(`chart([{ m: 'Jan', s: 'OK', n: 2 }, { m: 'Jan', s: 'NO', n: 1 }], { x: 'm', y: 'n', color: 's', textWidth: 6 })\n`);
      await d.waitFor(/m\s+OK\s+NO\s+total\s+bar\n[─\s]+\nJan\s+2\s+1\s+3\s+██████/, 'a stacked chart as text');
      d.write('.exit\n');
      assert.equal(await d.exited(), 0);
      checkHistory(env.LENDER_REPL_HISTORY!, password, ["await rows('D07', {limit: 3})", '.datasets', '1 + 41']);
    }));

  it('.save writes the lines typed with mode 0600, leaving out the ones that hold a secret', () =>
    withPipedRepl(async (d, _env, home) => {
      await d.waitFor(/Connected as demo/, 'the connected banner');
      const password = await demoPassword(d, '\n');
      d.write(`const pw = '${password}'\n`);
      d.write('6 * 7\n');
      await d.waitFor(/42/, 'a plain evaluation');
      const saved = join(home, 'session.js');
      writeFileSync(saved, 'old content\n', { mode: 0o644 });
      d.write(`.save ${saved}\n`);
      await d.waitFor(/Saved \d+ lines to .*\(\d+ with a secret left out\)/, 'the .save confirmation');
      d.write('.exit\n');
      assert.equal(await d.exited(), 0);
      assert.equal(statSync(saved).mode & 0o777, 0o600);
      const text = readFileSync(saved, 'utf8');
      assert.ok(text.includes('6 * 7'), text);
      assert.ok(!text.includes(password), 'the password was saved');
      assert.ok(!text.includes('old content'));
    }));

  it('says the history is off when its folder cannot be made, and goes on (under /proc, too)', async () => {
    const { home, env } = freshHome();
    // Node's recursive mkdir never returns for a path under /proc.
    const d = new Driver(process.execPath, [BIN, 'repl', '--sandbox'], { ...env, LENDER_REPL_HISTORY: '/proc/no-such-folder/history' }, home);
    try {
      await d.waitFor(/History is off: [^\n]*\/proc\/no-such-folder/, 'the history being off');
      d.write('6 * 7\n');
      await d.waitFor(/42/, 'a plain evaluation');
      d.write('.exit\n');
      assert.equal(await d.exited(), 0, d.output);
    } finally {
      d.kill();
    }
  });

  it('ends cleanly when stdin ends while a dot-command is still running', () =>
    withPipedRepl(async (d) => {
      // Before the session connects, so .whoami is still waiting when stdin closes; it then
      // answers into a closed REPL (Node 24 threw ERR_USE_AFTER_CLOSE on the prompt after it).
      d.write('.whoami\n');
      d.endInput();
      assert.equal(await d.exited(), 0, d.output);
    }));
});
