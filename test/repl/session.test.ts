// openSession({ sandbox: true }) and its helpers, against the embedded sandbox over HTTPS.
import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { openSession, type LenderSession } from '../../src/session.ts';
import { ConfigError } from '../../src/core/errors.ts';
import { FileError } from '../../src/core/file-errors.ts';

describe('openSession({ sandbox: true })', () => {
  let session: LenderSession;
  let password: string;
  const dir = mkdtempSync(join(tmpdir(), 'lender-session-test-'));

  before(async () => {
    session = await openSession({ sandbox: { seed: 7, scale: 300 } });
    password = session.knownSecrets()[0]!;
  });
  after(async () => {
    await session.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is logged in as demo with the live catalog', () => {
    const id = session.whoami();
    assert.equal(id.lender, 'demo');
    assert.equal(id.sandbox, true);
    assert.match(id.lenderPublicId, /^[0-9a-f-]{36}$/);
    assert.ok(session.catalog.available().includes('D07'));
    assert.ok(!session.catalog.available().includes('D04'));
    assert.equal(session.datasetCodes.length, 25);
  });

  it('rows() returns the first N rows, printed as a table; JSON is the plain rows', async () => {
    const rows = await session.rows('D07', { limit: 3 });
    assert.equal(rows.length, 3);
    assert.equal(rows.dataset, 'D07');
    const text = inspect(rows);
    assert.match(text, /^3 rows of D07\npublic_id\s+amount/);
    assert.deepEqual(JSON.parse(JSON.stringify(rows)), [...rows]);
    assert.ok(Array.isArray(rows.map((r) => r.public_id)));
  });

  it('count() of a via dataset sums month windows to the number of rows a full stream yields', async () => {
    const counted = await session.count('D23');
    assert.ok(counted.windows > 1);
    const ids = new Set<string>();
    for await (const row of session.stream('D23')) ids.add(String((row as { public_id: unknown }).public_id));
    assert.equal(counted.total, ids.size);
    assert.equal(counted.exact, true);
    assert.match(inspect(counted), new RegExp(`D23: ${ids.size.toLocaleString('en-US')} rows over \\d+ windows`));
  });

  it('count() of a direct dataset is one request', async () => {
    const counted = await session.count('D07');
    assert.equal(counted.windows, 1);
    assert.equal(counted.total, 300);
  });

  it('pages() skips empty windows and summarises pages', async () => {
    const pages = await session.pages('D23', { pages: 2, limit: 5 });
    assert.equal(pages.length, 2);
    // Via datasets give short pages by design; never more than the limit, and never empty here.
    for (const p of pages) assert.ok(p.returned > 0 && p.returned <= 5);
    assert.match(inspect(pages[0]), /^Page D23: [1-5] rows window \S+ → \S+, (more follow|last page)$/);
  });

  it('push() from an NDJSON file reports invalid and malformed records; flag() sets DNC', async () => {
    const file = join(dir, 'accounts.ndjson');
    const good = { status: 1, debtorCompanyId: 'T-C-1', firstName: 'A', lastName: 'B', language: 'en', accountId: 'T-A-1', subAccountId: 'T-S-1', principal: '100', paidAmount: '40' };
    const nameless = { status: 1, debtorCompanyId: 'T-C-3', accountId: 'T-A-3', subAccountId: 'T-S-3', principal: '10' };
    writeFileSync(file, `${JSON.stringify(good)}\n${JSON.stringify({ ...good, accountId: 'T-A-2', principal: 'x' })}\nnot json\n${JSON.stringify(nameless)}\n`);
    const since = new Date().toISOString();
    const result = await session.push(file);
    assert.equal(result.accepted, 1);
    assert.equal(result.rejected, 3);
    assert.ok(result.rejects.some((r) => r.errors.length >= 3));
    // Every reason of every reject is shown whole: they are what the user came to read.
    const shown = inspect(result);
    for (const reason of result.rejects.flatMap((r) => r.errors)) assert.ok(shown.includes(reason), `${reason} is not shown whole in:\n${shown}`);
    assert.match(shown, /principal must be a valid number/);
    const flagged = await session.flag([{ status: 'doNotContact', debtorCompanyId: 'T-C-1', accountId: 'T-A-1' }]);
    assert.equal(flagged.accepted, 1);
    await session.sandbox!.drain();
    const d02 = (await session.rows('D02', { since, limit: 50 })).filter((r) => r.account_id === 'T-A-1');
    assert.equal(d02.length, 1);
    assert.equal(d02[0]!.outstanding_balance, '60');
    assert.equal(d02[0]!.do_not_contact, true);
  });

  it('push() and flag() of a file that is not there, or of a folder: a FileError naming it, nothing sent', async () => {
    const before = session.sandbox!.stats().requests;
    for (const [path, reason] of [[join(dir, 'absent.ndjson'), 'no such file or directory (ENOENT)'], [dir, 'illegal operation on a directory (EISDIR)']] as const) {
      for (const write of [session.push, session.flag]) {
        await assert.rejects(write(path), (error: unknown) => error instanceof FileError &&
          error.message === `cannot read the records file ${path}: ${reason}`, path);
      }
    }
    assert.equal(session.sandbox!.stats().requests, before, 'no request was sent');
    // Nothing left open, nothing emptied: the rejects file of a push whose records cannot be
    // read, and the records file of a push whose options are wrong.
    const rejects = join(dir, 'last-rejects.ndjson');
    writeFileSync(rejects, 'kept\n');
    await assert.rejects(session.push(join(dir, 'absent.ndjson'), { rejects }), FileError);
    assert.equal(readFileSync(rejects, 'utf8'), 'kept\n');
    const records = join(dir, 'one.ndjson');
    writeFileSync(records, '{}\n');
    await assert.rejects(session.push(records, { batchSize: -1 }), ConfigError);
    const held = () => readdirSync('/proc/self/fd').map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return ''; // closed meanwhile
      }
    }).filter((target) => target === rejects || target === records);
    // A stream's file is closed on the thread pool, a moment after it is destroyed.
    for (const until = Date.now() + 10_000; held().length > 0 && Date.now() < until;) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(held(), []);
  });

  it('an option a helper does not take is refused naming it, nothing read or sent; flag() takes the writer options push() does', async () => {
    const refused = (message: string) => (error: unknown): boolean => error instanceof ConfigError && error.message === message;
    const requests = session.client.stats.requests;
    await assert.rejects(session.rows('D07', { limt: 5 } as never), refused("rows() has no option 'limt'; did you mean 'limit'?"));
    await assert.rejects(session.pages('D07', { page: 2 } as never), refused("pages() has no option 'page'; did you mean 'pages'?"));
    await assert.rejects(session.pages('D07', { includeempty: true } as never), refused("pages() has no option 'includeempty'; did you mean 'includeEmpty'?"));
    // A load's state is not for these helpers to keep.
    await assert.rejects(session.rows('D07', { stateKey: 'x' } as never), (error: unknown) => error instanceof ConfigError && /^rows\(\) has no option 'stateKey'/.test(error.message));
    await assert.rejects(session.count('D07', { sinse: '2026-01-01' } as never), refused("count() has no option 'sinse'; did you mean 'since'?"));
    await assert.rejects(session.describe('D07', { sampel: 5 } as never), refused("describe() has no option 'sampel'; did you mean 'sample'?"));
    await assert.rejects(session.sql('SELECT 1', { databse: 'x.duckdb' } as never), refused("sql() has no option 'databse'; did you mean 'database'?"));
    await assert.rejects(session.sync(['D26'], { out: join(dir, 'typo'), limt: 5 } as never), refused("sync() has no option 'limt'; did you mean 'limit'?"));
    await assert.rejects(session.push([], { rejcts: 'r.ndjson' } as never), refused("the account writer has no option 'rejcts'; did you mean 'rejects'?"));
    assert.throws(() => session.table([{ a: 1 }], undefined, { maxrows: 1 } as never), refused("table() has no option 'maxrows'; did you mean 'maxRows'?"));
    assert.throws(() => session.chart({ a: 1 }, { titel: 'x' } as never), refused("chart() has no option 'titel'; did you mean 'title'?"));
    assert.equal(session.client.stats.requests, requests);
    // flag() took only a signal, the rest ignored: its rejects file now comes as push()'s does.
    const rejects = join(dir, 'flag-rejects.ndjson');
    const flagged = await session.flag([{ status: 'disputed', accountId: 'T-A-1' }], { rejects });
    assert.equal(flagged.rejected, 1);
    const lines = readFileSync(rejects, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { reason: string });
    assert.deepEqual(lines.map((l) => l.reason), ['invalid']);
  });

  it('sync() writes NDJSON and a state file, then loads incrementally', async () => {
    const out = join(dir, 'sync');
    const first = await session.sync(['D07'], { out, state: join(dir, 'state.json') });
    assert.equal(first.datasets.D07!.mode, 'initial');
    assert.equal(first.datasets.D07!.rows, 300);
    session.sandbox!.advance();
    const second = await session.sync('D07', { out, state: join(dir, 'state.json') });
    assert.equal(second.datasets.D07!.mode, 'incremental');
    assert.ok(second.datasets.D07!.rows < 300);
    assert.match(inspect(second), /D07\s+incremental/);
  });

  it('an abort signal stops a helper with an AbortError', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(session.rows('D07', { signal: controller.signal }), { name: 'AbortError' });
  });

  it('never shows the password or a token in inspect, JSON or table output', async () => {
    const rows = await session.rows('D01', { limit: 2 });
    const texts = [
      inspect(session, { depth: 10, showHidden: true }), JSON.stringify(session), inspect(session.client, { depth: 10 }),
      JSON.stringify(session.client), inspect(session.whoami()), inspect(session.sandbox, { depth: 10 }),
      inspect(session.catalog), inspect(rows), String(session.table(rows)), inspect(session.relogin),
    ];
    for (const t of texts) {
      assert.ok(!t.includes(password), 'the password is shown');
      assert.doesNotMatch(t, /eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}/);
    }
  });

  it('relogin() gets a new client that works', async () => {
    const before = session.client;
    await session.relogin();
    assert.notEqual(session.client, before);
    assert.equal((await session.rows('D07', { limit: 1 })).length, 1);
  });
});

describe('openSession() without credentials', () => {
  it('fails with a sentence naming the environment variables and the sandbox option', async () => {
    const home = mkdtempSync(join(tmpdir(), 'lender-session-nocreds-'));
    try {
      await assert.rejects(openSession({ env: { HOME: home, XDG_CONFIG_HOME: join(home, 'config') } }), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /LENDER_AUTH_URL/);
        assert.match(error.message, /sandbox/);
        return true;
      });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
