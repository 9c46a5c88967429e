// Lines run one at a time, in the order they came, and only once the session is connected: with
// piped input (`printf … | lender repl`), `.exit` and the end of the input wait for the calls
// before them; the prompt shows while the session is still connecting.
import { strict as assert } from 'node:assert';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { REPLServer } from 'node:repl';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { LineGate } from '../../repl/line-gate.ts';
import { runRepl } from '../../repl/start.ts';
import { openSession } from '../../src/session.ts';
import type { LenderSession } from '../../src/session/context.ts';
import { Driver } from './driver.ts';
import { startTestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
const BIN = join(ROOT, 'bin', 'lender.mjs');

const homes: string[] = [];
after(() => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

/** Runs `use` on a REPL with the embedded sandbox and piped input, and kills it after. */
async function withPipedRepl(use: (d: Driver) => Promise<void>): Promise<void> {
  const d = pipedRepl();
  try {
    await use(d);
  } finally {
    d.kill();
  }
}

function pipedRepl(): Driver {
  const home = mkdtempSync(join(tmpdir(), 'lender-repl-order-'));
  homes.push(home);
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, LENDER_REPL_HISTORY: '' };
  for (const k of ['LENDER_AUTH_URL', 'LENDER_SUBDOMAIN', 'LENDER_EMAIL', 'LENDER_PASSWORD', 'LENDER_DEBUG']) delete env[k];
  return new Driver(process.execPath, [BIN, 'repl', '--sandbox'], env, home);
}

/** The positions of `needles` in `text`, each searched after the one before; -1 when missing. */
function positions(text: string, needles: (string | RegExp)[]): number[] {
  let from = 0;
  return needles.map((needle) => {
    const rest = text.slice(from);
    const m = typeof needle === 'string' ? rest.indexOf(needle) : rest.search(needle);
    if (m < 0) return -1;
    from += m + 1;
    return from - 1;
  });
}

describe('lender repl with piped input (the whole script written at once, then stdin closed)', () => {
  it('runs the lines in order, each after the one before has finished, and .exit waits for them', async () => {
    await withPipedRepl(async (d) => {
      // A slow first line (the session is not even connected yet) before quick ones.
      d.write([
        `await count('D23')`,
        `'second'`,
        `await new Promise((r) => setTimeout(r, 200)); 'third'`,
        `'fourth'`,
        `await count('D07')`,
        '.exit',
        `'after exit'`,
        '',
      ].join('\n'));
      d.endInput();
      assert.equal(await d.exited(), 0, d.output);
      const out = d.output;
      const at = positions(out, ['Connected as demo', 'D23: 1,000 rows', `'second'`, `'third'`, `'fourth'`, 'D07: 1,000 rows']);
      assert.ok(at.every((p) => p >= 0), `every result, in order:\n${out}`);
      assert.doesNotMatch(out, /Interrupted|interrupted|closed|after exit/, out);
    });
  });

  it('the end of the input waits for the running call, which finishes', async () => {
    await withPipedRepl(async (d) => {
      d.write(`await rows('D07', {limit: 2})\n1 + 1`);
      d.endInput();
      assert.equal(await d.exited(), 0, d.output);
      const at = positions(d.output, ['Connected as demo', '2 rows of D07', /\n?lender> 2\n/]);
      assert.ok(at.every((p) => p >= 0), d.output);
      assert.doesNotMatch(d.output, /Interrupted|interrupted/);
    });
  });
});

describe('lender repl with piped input still open (a pipe from a process not done)', () => {
  it('SIGINT aborts the running call and the REPL goes on, as Ctrl-C does on a terminal', async () => {
    await withPipedRepl(async (d) => {
      d.write(`'first'\nsandbox.setFaults({ latencyMs: 400 })\n`);
      await d.waitFor(/latencyMs: 400/, 'the faults set');
      d.write(`await count('D23')\n`);
      await new Promise((r) => setTimeout(r, 300));
      d.child.kill('SIGINT');
      await d.waitFor(/interrupted/i, 'the call interrupted');
      d.write(`'after'\n`);
      await d.waitFor(/'after'/, 'the next line run');
      d.child.kill('SIGINT');
      await d.waitFor(/To exit, type \.exit/, 'the hint for an idle SIGINT');
      d.endInput();
      assert.equal(await d.exited(), 0, d.output);
    });
  });
});

describe('lender repl: mistakes at the prompt are one line each', () => {
  it('a syntax error with await, a helper without its dataset, sync without options, a chart of a negative value', async () => {
    await withPipedRepl(async (d) => {
      d.write([`await foo bar`, `await rows()`, `await sync('D26')`, `chart({ up: 3, down: -2 })`, `stream('D07')`, '.exit', ''].join('\n'));
      d.endInput();
      assert.equal(await d.exited(), 0, d.output);
      const out = d.output;
      assert.match(out, /SyntaxError: Unexpected (identifier|token) '\w+'/);
      assert.doesNotMatch(out, /SyntaxError: +\(/, 'the message is not empty');
      assert.match(out, /UnknownDatasetError: A dataset is named by its code, such as 'D07', or by \{ section: 'S2', dataset: 'D07' \}; got undefined\./);
      // sync without options goes into ./lender.duckdb, as `lender sync` does.
      assert.match(out, /D26 +initial +\d+/);
      assert.doesNotMatch(out, /TypeError|RangeError/, out);
      assert.match(out, /down +-2 +░{27}/);
      assert.match(out, /lender> ExportStream <D07: 0 rows in 0 pages read>\n/);
      assert.doesNotMatch(out, /_readableState/);
    });
  });
});

describe('lender repl against a service', () => {
  it('says it is logging in before the prompt, and Ctrl-C (SIGINT) then stops it', async () => {
    const t = await startTestSandbox({ seed: 7, scale: 20, latencyMs: 3_000 });
    const home = mkdtempSync(join(tmpdir(), 'lender-repl-login-'));
    homes.push(home);
    const d = new Driver(process.execPath, [BIN, 'repl'], { PATH: process.env.PATH, HOME: home, LENDER_REPL_HISTORY: '', ...t.cliEnv(home) }, home);
    try {
      await d.waitFor(/lender repl: logging in to https:\/\/127\.0\.0\.1:\d+… \(Ctrl-C stops\)\n/, 'the login line');
      assert.doesNotMatch(d.output, /lender>/, 'no prompt before the login');
      d.child.kill('SIGINT');
      assert.equal(await d.exited(), 130, d.output);
      assert.match(d.output, /lender repl: stopped\.\n/);
    } finally {
      d.kill();
      await t.close();
    }
  });
});

/** A REPL whose session connects when the test says so, and its output as text. */
function connectingRepl(terminal: boolean) {
  let connect!: (s: LenderSession) => void;
  const session = new Promise<LenderSession>((resolveSession) => (connect = resolveSession));
  const input = new PassThrough();
  const output = new PassThrough();
  let text = '';
  output.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  const seen = (pattern: RegExp): Promise<void> => new Promise((resolveSeen) => {
    const check = (): void => {
      if (!pattern.test(text)) return;
      output.off('data', check);
      resolveSeen();
    };
    output.on('data', check);
    check();
  });
  const done = runRepl({ session, connectingTo: 'a test sandbox', input, output, terminal, env: {}, historyFile: undefined, version: 'test' });
  return { connect, input, seen, done, text: () => text };
}

describe('runRepl while the session connects', () => {
  it('shows the prompt before the session is there; lines typed meanwhile run once it is, in order', async () => {
    const r = connectingRepl(false);
    await r.seen(/lender> /);
    assert.doesNotMatch(r.text(), /Connected/);
    r.input.write(`6 * 7\n.whoami\nawait count('D07')\n`);
    // The lines have been read; none of them may run before the session is there.
    await new Promise((resolve) => setImmediate(resolve));
    assert.doesNotMatch(r.text(), /42|demo|1,000/, r.text());
    const real = await openSession({ sandbox: true, env: {} });
    r.connect(real);
    await r.seen(/D07: 1,000 rows/);
    const at = positions(r.text(), ['Connected as demo', '42', `lender: 'demo'`, 'D07: 1,000 rows']);
    assert.ok(at.every((p) => p >= 0), r.text());
    // The news is a line of its own, not the rest of the prompt's line.
    assert.match(r.text(), /^Connected as demo/m);
    r.input.end();
    assert.equal(await r.done, 0);
    assert.ok(r.text().endsWith('\n'), 'the last prompt gets its line\'s end');
  });
});

describe('runRepl: Ctrl-C while the session connects', () => {
  it('on a terminal, cancels the lines typed ahead, as it stops a running call', async () => {
    const r = connectingRepl(true);
    await r.seen(/lender> /);
    try {
      r.input.write(`await count('D07')\r'queued' + '-too'\r`);
      r.input.write('\x03');
      await r.seen(/Cancelled 2 lines typed ahead\./);
      r.connect(await openSession({ sandbox: true, env: {} }));
      await r.seen(/Connected as demo/);
      // Lines run in order: had the count stayed queued, it would have run before this one.
      r.input.write(`'after' + '!'\r`);
      await r.seen(/'after!'/);
      assert.doesNotMatch(r.text(), /1,000 rows|queued-too/, r.text());
    } finally {
      r.input.write('.exit\r');
    }
    assert.equal(await r.done, 0);
  });

  it('without a terminal, SIGINT cancels the lines read ahead', async () => {
    const r = connectingRepl(false);
    await r.seen(/lender> /);
    try {
      r.input.write(`await count('D07')\n`);
      // The line has been read once the REPL's reader had its turn.
      await new Promise((resolveTurn) => setImmediate(resolveTurn));
      process.emit('SIGINT', 'SIGINT');
      await r.seen(/Cancelled the line typed ahead\./);
      r.connect(await openSession({ sandbox: true, env: {} }));
      r.input.write(`'after' + '!'\n`);
      await r.seen(/'after!'/);
      assert.doesNotMatch(r.text(), /1,000 rows/, r.text());
    } finally {
      r.input.end();
    }
    assert.equal(await r.done, 0);
  });
});

describe('runRepl when the session cannot connect, input piped', () => {
  it('says so on a line of its own, ends with it, and exits 1', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let text = '';
    output.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    const done = runRepl({
      session: Promise.reject(new Error('the service is not there')), connectingTo: 'nowhere', input, output,
      terminal: false, env: {}, historyFile: undefined, version: 'test',
    });
    assert.equal(await done, 1);
    await new Promise((r) => setImmediate(r));
    assert.match(text, /^Could not connect: Error: the service is not there\n$/m);
    assert.ok(text.endsWith('Could not connect: Error: the service is not there\n'), JSON.stringify(text.slice(-80)));
  });
});

describe('LineGate', () => {
  /** Enough of a REPLServer: the 'line' listeners the gate takes over, and 'exit'. */
  function fakeServer(): { server: REPLServer; ran: string[]; finishers: Map<string, () => void>; gate: LineGate } {
    const server = new EventEmitter() as unknown as REPLServer;
    const ran: string[] = [];
    const finishers = new Map<string, () => void>();
    let gate!: LineGate;
    server.on('line', (line: string) => {
      ran.push(line);
      // A line named 'slow…' starts work that finishes when the test says so.
      if (line.startsWith('slow')) gate.track(new Promise<void>((r) => finishers.set(line, r)));
    });
    gate = new LineGate(server);
    return { server, ran, finishers, gate };
  }

  /** Lets the gate take its next turns (a line runs at most once per turn). */
  const turns = async (n = 5): Promise<void> => {
    for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
  };

  it('holds lines until opened, then runs each once the work of the one before has finished', async () => {
    const { server, ran, finishers, gate } = fakeServer();
    for (const line of ['a', 'slow1', 'b', 'slow2', 'c']) server.emit('line', line);
    await turns();
    assert.deepEqual(ran, []);
    gate.open();
    await turns();
    assert.deepEqual(ran, ['a', 'slow1'], 'b waits for slow1');
    finishers.get('slow1')!();
    await turns();
    assert.deepEqual(ran, ['a', 'slow1', 'b', 'slow2']);
    let ended = false;
    gate.end(() => (ended = true));
    await turns();
    assert.equal(ended, false, 'the end waits for the running line');
    finishers.get('slow2')!();
    await turns();
    assert.deepEqual(ran, ['a', 'slow1', 'b', 'slow2', 'c']);
    assert.equal(ended, true);
  });

  it('runs nothing more once the REPL has exited, not even what was queued', async () => {
    const { server, ran, gate } = fakeServer();
    server.emit('line', 'a');
    gate.open();
    server.emit('line', 'b');
    server.emit('line', 'c');
    server.emit('exit');
    await turns();
    assert.deepEqual(ran, ['a']);
  });
});
