// The REPL's pure parts and its history file, without a sandbox.
import { strict as assert } from 'node:assert';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import repl from 'node:repl';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { completeDatasetCode } from '../../repl/completer.ts';
import { oneLine } from '../../repl/errors.ts';
import { attachHistory, historyPath, HISTORY_ENV } from '../../repl/history.ts';
import replCommand from '../../src/cli/commands/repl.ts';
import { DatasetUnavailableError, ServerError } from '../../src/core/errors.ts';
import type { ServiceApi } from '../../src/core/api.ts';
import { countRows } from '../../src/session/count.ts';
import { findLeaks, looksSensitive } from '../../src/session/secrets.ts';
import { TextTable, barChart, formatTable } from '../../src/session/table.ts';

const CODES = ['D01', 'D02', 'D03', 'D07', 'D23', 'D26'];
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJsZW5kZXJJZCI6IngifQ.c2lnbmF0dXJlLXZhbHVl';

describe('secret filters', () => {
  it('history refuses lines with a known secret, a JWT, or sensitive words', () => {
    assert.equal(looksSensitive(`x = 'Xk9$secretvalue'`, ['Xk9$secretvalue']), true);
    assert.equal(looksSensitive(`const t = '${JWT}'`), true);
    for (const line of ['LENDER_PASSWORD=x', 'client.token', 'refreshToken', 'Authorization: Bearer x', 'passwd',
      `  pwd: 'Zx9kP2mQ7hunter',`, `const apiKey = 'abc'`, `const key = 'sk_live_51HqLyjWDarjtT1zd'`, `aws = 'AKIAIOSFODNN7EXAMPLE'`,
      '-----BEGIN RSA PRIVATE KEY-----', 'process.env.API_KEY', 'privateKey',
      `const u = 'postgres://etl:s3cretPW@127.0.0.1/db'`, `new URL("https://me:Zx9kP2mQ@example.com")`, `const url = \`mysql://:hunter22@db\``,
      `const pw = 'hunter2'`, `login({ pw: 'hunter2' })`, `x = 'hunter2' // my pass`]) {
      assert.equal(looksSensitive(line), true, line);
    }
    for (const line of [`await rows('D07', {limit: 3})`, `const skip = 'sk_8'`, `cwd()`, `keyof typeof x`, `const url = 'postgres://etl@127.0.0.1:5432/db'`,
      `open('https://example.com:8443/a@b')`, `passes.length`, `const pwm = 1`, `send('PW-7 is late')`]) assert.equal(looksSensitive(line), false, line);
    assert.equal(looksSensitive(`await rows('D07', {limit: 3})`, ['Xk9$secretvalue']), false);
  });

  it('output scans find real secret values and JWTs, not the word "token"', () => {
    assert.deepEqual(findLeaks('a refresh of the token happened', ['Xk9$secretvalue']), []);
    assert.deepEqual(findLeaks('pw Xk9$secretvalue', ['Xk9$secretvalue']), ['known secret #1']);
    assert.deepEqual(findLeaks(`t=${JWT}`), ['a JWT-looking string']);
  });
});

describe('completion of dataset codes', () => {
  it('completes a code inside a string', () => {
    assert.deepEqual(completeDatasetCode(`rows('D0`, CODES), [['D01', 'D02', 'D03', 'D07'], 'D0']);
    assert.deepEqual(completeDatasetCode(`rows("D2`, CODES), [['D23', 'D26'], 'D2']);
    assert.deepEqual(completeDatasetCode(`count('d07`, CODES), [[`D07'`], 'd07']);
    assert.deepEqual(completeDatasetCode(`rows('`, CODES), [CODES, '']);
  });

  it('leaves everything else to Node', () => {
    assert.equal(completeDatasetCode('ro', CODES), undefined);
    assert.equal(completeDatasetCode(`rows('X9`, CODES), undefined);
  });
});

describe('count()', () => {
  it('asks for no more windows once one has failed, and aborts the ones in flight', async () => {
    let calls = 0;
    let abortedInFlight = 0;
    const api = {
      fetchPage(_dataset: unknown, _query: unknown, opts?: { signal?: AbortSignal }): Promise<unknown> {
        calls += 1;
        if (calls === 1) return Promise.reject(new ServerError('The service failed.', { status: 500 }));
        // The others answer a moment later, unless aborted first.
        return new Promise((resolve, reject) => {
          const answer = setImmediate(() => resolve({ rows: [], pagination: { returned: 0, nextCursor: null, total: 1 } }));
          opts?.signal?.addEventListener('abort', () => {
            clearImmediate(answer);
            abortedInFlight += 1;
            reject(opts.signal!.reason);
          }, { once: true });
        });
      },
    } as unknown as ServiceApi;
    // D23 is a via dataset: counted month by month from the export origin, over many windows.
    await assert.rejects(countRows(api, 'D23', { concurrency: 4 }), { name: 'ServerError' });
    await new Promise((r) => setImmediate(r));
    assert.equal(calls, 4);
    assert.equal(abortedInFlight, 3);
  });
});

describe('tables and charts', () => {
  it('formats rows with aligned columns, right-aligned numbers and cut long cells', () => {
    const text = formatTable([{ id: 'a', n: 5, note: 'x'.repeat(50) }, { id: 'bb', n: 120, note: null }], undefined, { maxWidth: 10 });
    assert.equal(text, ['id    n  note', '──  ───  ──────────', 'a     5  xxxxxxxxx…', 'bb  120'].join('\n'));
  });

  it('a TextTable prints as itself and serialises to its text', () => {
    const t = new TextTable([{ a: 1 }]);
    assert.equal(inspect(t), 'a\n─\n1');
    assert.equal(JSON.stringify({ t }), JSON.stringify({ t: 'a\n─\n1' }));
    assert.equal(`${t}`, 'a\n─\n1');
  });

  it('a bar chart scales bars to the largest value', () => {
    const lines = barChart({ A: 10, B: 5, C: 0 }, 10).text.split('\n');
    assert.match(lines[2]!, /^A\s+10\s+█{10}$/);
    assert.match(lines[3]!, /^B\s+5\s+█{5}$/);
    assert.match(lines[4]!, /^C\s+0$/);
  });
});

describe('one-line errors', () => {
  it('names the error, the message, status and requestId', () => {
    const e = new DatasetUnavailableError('D04', 'Dataset D04 is not available.', { status: 404, requestId: 'r-1' });
    assert.equal(oneLine(e), 'DatasetUnavailableError: Dataset D04 is not available. (HTTP 404, requestId r-1)');
    assert.equal(oneLine({ name: 'ReferenceError', message: 'x is not defined\nmore' }), 'ReferenceError: x is not defined');
    assert.equal(oneLine(5), 'Thrown: 5');
  });
});

describe('history file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lender-history-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('defaults to the XDG state folder and honours LENDER_REPL_HISTORY', () => {
    assert.equal(historyPath({ HOME: '/h' }), '/h/.local/state/lender-streams/repl_history');
    assert.equal(historyPath({ HOME: '/h', XDG_STATE_HOME: '/s' }), '/s/lender-streams/repl_history');
    assert.equal(historyPath({ LENDER_REPL_HISTORY: '/x/h' }), '/x/h');
    assert.equal(historyPath({ LENDER_REPL_HISTORY: '' }), undefined);
  });

  it('`lender repl --help` names the variable the history reads', () => {
    assert.match(replCommand.help, new RegExp(`\\$${HISTORY_ENV}, else`));
    assert.match(replCommand.help, new RegExp(`Set ${HISTORY_ENV}= \\(empty\\)`));
  });

  it('writes each accepted line at once, 0600, never a secret one, and cleans an old file', () => {
    const path = join(dir, 'sub', 'history');
    const input = new PassThrough();
    const server = repl.start({ input, output: new PassThrough(), terminal: false, prompt: '' });
    const history = attachHistory(server, { path, isSecret: (l) => looksSensitive(l, ['Xk9$secretvalue']) });
    try {
      server.emit('line', '1 + 1');
      server.emit('line', `const p = 'Xk9$secretvalue'`);
      server.emit('line', `const t = '${JWT}'`);
      server.emit('line', 'await rows("D07")');
      // Read before close: written as you go.
      assert.equal(readFileSync(path, 'utf8'), '1 + 1\nawait rows("D07")\n');
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.equal(history.written, 2);
    } finally {
      history.close();
      server.close();
    }

    // A looser file from elsewhere with a secret line in it: tightened and cleaned on start.
    chmodSync(path, 0o644);
    writeFileSync(path, `ok line\nLENDER_PASSWORD=hunter2hunter2\n`, { mode: 0o644 });
    chmodSync(path, 0o644);
    const again = repl.start({ input: new PassThrough(), output: new PassThrough(), terminal: false, prompt: '' });
    const h2 = attachHistory(again, { path, isSecret: (l) => looksSensitive(l) });
    try {
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.equal(readFileSync(path, 'utf8'), 'ok line\n');
      assert.deepEqual((again as unknown as { history: string[] }).history, ['ok line']);
    } finally {
      h2.close();
      again.close();
    }
  });

  it('lines holding the session\'s secrets, known only once it connects, leave the file and arrow-up then', () => {
    const folder = join(dir, 'loose');
    mkdirSync(folder, { mode: 0o755 });
    chmodSync(folder, 0o755);
    const path = join(folder, 'history');
    writeFileSync(path, `const old = 'Pw-of-the-lender-42'
await count('D07')
`, { mode: 0o600 });
    const secrets: string[] = [];
    const server = repl.start({ input: new PassThrough(), output: new PassThrough(), terminal: false, prompt: '' });
    const history = attachHistory(server, { path, isSecret: (l) => looksSensitive(l, secrets) });
    try {
      // Not a secret yet: nothing tells it from any text.
      assert.deepEqual((server as unknown as { history: string[] }).history, [`await count('D07')`, `const old = 'Pw-of-the-lender-42'`]);
      secrets.push('Pw-of-the-lender-42'); // the session connected
      history.forgetSecrets();
      assert.equal(readFileSync(path, 'utf8'), `await count('D07')\n`);
      assert.deepEqual((server as unknown as { history: string[] }).history, [`await count('D07')`]);
      server.emit('line', '2 + 2');
      assert.equal(readFileSync(path, 'utf8'), `await count('D07')\n2 + 2\n`, 'lines go on being written, to the file as it is now');
      assert.equal(statSync(path).mode & 0o777, 0o600);
    } finally {
      history.close();
      server.close();
    }
  });
  it('makes missing folders 0700 and leaves existing ones as they are, but its own default folder', () => {
    const attach = (path: string, privateFolder?: boolean): void => {
      const server = repl.start({ input: new PassThrough(), output: new PassThrough(), terminal: false, prompt: '' });
      attachHistory(server, { path, isSecret: () => false, privateFolder }).close();
      server.close();
    };
    const home = join(dir, 'home');
    mkdirSync(home);
    chmodSync(home, 0o755);
    attach(join(home, '.lender_repl_history'));
    assert.equal(statSync(home).mode & 0o7777, 0o755, 'a folder the user named keeps its mode');
    const shared = join(dir, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    attach(join(shared, 'history'));
    assert.equal(statSync(shared).mode & 0o7777, 0o1777, 'a shared folder keeps its mode and sticky bit');
    attach(join(shared, 'a', 'b', 'history'));
    assert.equal(statSync(join(shared, 'a')).mode & 0o777, 0o700);
    assert.equal(statSync(join(shared, 'a', 'b')).mode & 0o777, 0o700);
    const own = join(dir, 'state', 'lender-streams');
    mkdirSync(own, { recursive: true });
    chmodSync(own, 0o755);
    attach(join(own, 'repl_history'), true);
    assert.equal(statSync(own).mode & 0o777, 0o700, 'the default folder is tightened');
  });

  it('trims an overgrown file in place: another REPL appending to it keeps its lines, a symbolic link stays one', () => {
    const start = (): repl.REPLServer => repl.start({ input: new PassThrough(), output: new PassThrough(), terminal: false, prompt: '' });
    const path = join(dir, 'shared-history');
    const first = start();
    const h1 = attachHistory(first, { path, isSecret: () => false, maxLines: 2 });
    const second = start();
    try {
      for (const line of ['a', 'b', 'c', 'd', 'e']) first.emit('line', line);
      // Started while the file holds more than twice its cap: it trims the file to the last lines.
      const h2 = attachHistory(second, { path, isSecret: () => false, maxLines: 2 });
      try {
        assert.equal(readFileSync(path, 'utf8'), 'd\ne\n');
        first.emit('line', 'from the first');
        second.emit('line', 'from the second');
        assert.equal(readFileSync(path, 'utf8'), 'd\ne\nfrom the first\nfrom the second\n');
        assert.equal(statSync(path).mode & 0o777, 0o600);
      } finally {
        h2.close();
      }
    } finally {
      h1.close();
      first.close();
      second.close();
    }

    const target = join(dir, 'real-history');
    const link = join(dir, 'linked-history');
    writeFileSync(target, 'a\nb\nc\nd\ne\n', { mode: 0o644 });
    symlinkSync(target, link);
    const third = start();
    attachHistory(third, { path: link, isSecret: () => false, maxLines: 2 }).close();
    third.close();
    assert.ok(lstatSync(link).isSymbolicLink(), 'the link was replaced by a file');
    assert.equal(readFileSync(target, 'utf8'), 'd\ne\n');
    assert.equal(statSync(target).mode & 0o777, 0o600);
  });
});
