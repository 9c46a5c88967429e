// Secrets never leave in anything the CLI, the REPL or the library prints or
// writes; tenants are isolated on every dataset; no plain-HTTP request ever leaves the client;
// the credentials file's permission check holds.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { DATASETS } from '../../src/core/catalog.ts';
import { main } from '../../src/cli/main.ts';
import { LenderClient } from '../../src/client/client.ts';
import { InsecureUrlError, LenderError } from '../../src/core/errors.ts';
import { exportRows } from '../../src/exports/index.ts';
import { openSession } from '../../src/session.ts';
import { startHostileServer, type HostileServer } from '../helpers/hostile-server.ts';
import { startTestSandbox, type Session, type TestSandbox } from '../helpers/sandbox.ts';
import { SecretScan, isolatedEnv, loginTokens, runLender, type RunResult } from '../helpers/resilience.ts';
import { memoryIo } from '../helpers/memory-io.ts';


/** A plain TCP server that counts connections: proof that nothing was even attempted. */
async function connectionCounter(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let count = 0;
  const server = net.createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { port, connections: () => count, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Access tokens of this sandbox live 2 s, so the library, CLI and REPL renew theirs mid-run and
 * the scans below cover what a renewal prints and writes. */
const SHORT_TTL_SECONDS = 2;

describe('security', () => {
  let t: TestSandbox;
  let dir: string;
  let demo: Session;
  let other: Session;
  let env: NodeJS.ProcessEnv;
  const scan = new SecretScan();

  before(async () => {
    t = await startTestSandbox({ seed: 21, scale: 40, tokenTtlSeconds: SHORT_TTL_SECONDS });
    dir = await mkdtemp(join(tmpdir(), 'lender-security-'));
    demo = await t.loginAs('demo');
    other = await t.loginAs('other');
    for (const l of t.sandbox.lenders) scan.secret(l.password);
    scan.secret(demo.token, demo.refreshToken, other.token, other.refreshToken);
    const c = t.sandbox.credentials('demo');
    env = isolatedEnv({
      LENDER_AUTH_URL: c.authUrl, LENDER_SUBDOMAIN: c.lender, LENDER_EMAIL: c.email, LENDER_PASSWORD: c.password,
      LENDER_CA_FILE: t.sandbox.caFile,
    });
  });

  after(async () => {
    await t?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  describe('tenant isolation between demo and other', () => {
    // These requests carry raw tokens that nothing renews: they get a lifetime of 15 minutes, as
    // 2 s ran out on a busy machine before the last request of a test.
    before(async () => {
      t.sandbox.setFaults({ tokenTtlSeconds: 900 });
      demo = await t.loginAs('demo');
      other = await t.loginAs('other');
      scan.secret(demo.token, demo.refreshToken, other.token, other.refreshToken);
    });
    after(() => void t.sandbox.setFaults({ tokenTtlSeconds: SHORT_TTL_SECONDS }));

    const exportPath = (owner: Session, section: string, code: string) => `/admin/v3/lenders/${owner.lenderPublicId}/exports/${section}/${code}`;

    it('each lender reads its own rows: no row of any available dataset is in both', async (ctx) => {
      let compared = 0;
      for (const d of DATASETS) {
        const mine = await t.request('GET', `${exportPath(demo, d.section, d.code)}?limit=1000&since=2000-01-01T00:00:00Z&until=2100-01-01T00:00:00Z`, { token: demo.token });
        const theirs = await t.request('GET', `${exportPath(other, d.section, d.code)}?limit=1000&since=2000-01-01T00:00:00Z&until=2100-01-01T00:00:00Z`, { token: other.token });
        assert.equal(mine.status, theirs.status, `${d.code}: both lenders get the same status`);
        if (mine.status !== 200) {
          assert.equal(mine.status, 404, `${d.code}: ${mine.text}`);
          continue;
        }
        const a = new Set((mine.body.body.rows as object[]).map((r) => JSON.stringify(r)));
        const b = (theirs.body.body.rows as object[]).map((r) => JSON.stringify(r));
        assert.ok(a.size > 0 && b.length > 0, `${d.code}: both lenders have rows`);
        assert.deepEqual(b.filter((r) => a.has(r)), [], `${d.code}: rows shared between tenants`);
        compared += 1;
      }
      assert.ok(compared >= 15);
      ctx.diagnostic(`datasets compared=${compared}`);
    });

    it("a token on the other lender's lenderPublicId gets 403 on the catalog and every dataset code, both ways", async () => {
      for (const [token, owner] of [[other.token, demo], [demo.token, other]] as const) {
        const paths = [`/admin/v3/lenders/${owner.lenderPublicId}/exports/catalog`, ...DATASETS.map((d) => exportPath(owner, d.section, d.code))];
        for (const path of paths) {
          const res = await t.request('GET', `${path}?limit=5`, { token });
          assert.equal(res.status, 403, `${path}: ${res.status}`);
          assert.equal(res.body.message, 'Lender ID mismatch');
          assert.equal(res.body.success, false);
          assert.equal('body' in res.body, false, 'no data in a refusal');
        }
      }
    });

    it("a token on the other lender's accounts routes gets 401 and changes nothing", async () => {
      const before = t.sandbox.stats().accountsProcessed;
      const account = {
        status: 1, debtorCompanyId: 'X-1', firstName: 'Eve', lastName: 'Intruder', language: 'en',
        accountId: 'X-A1', subAccountId: 'X-A1-1', principal: '1',
      };
      for (const [token, owner] of [[other.token, demo], [demo.token, other]] as const) {
        for (const route of ['accounts', 'accounts/update-status']) {
          const body = route === 'accounts' ? { accounts: [account] } : { accounts: [{ status: 6, debtorCompanyId: 'X-1', accountId: 'X-A1' }] };
          const res = await t.request('POST', `/admin/v3/lenders/${owner.lenderPublicId}/${route}`, { token, body });
          assert.equal(res.status, 401, `${route}: ${res.text}`);
          assert.deepEqual(res.body, { error: 'Unauthorized' });
        }
      }
      await t.sandbox.drain();
      assert.equal(t.sandbox.stats().accountsProcessed, before);
    });
  });

  describe('no plain HTTP', () => {
    it('http:// URLs are refused before any connection, by the library, the session and the CLI', async () => {
      const counter = await connectionCounter();
      const url = `http://127.0.0.1:${counter.port}`;
      try {
        const creds = { lender: 'demo', email: 'a@b.c', password: 'plain-http-password' };
        scan.secret(creds.password);
        const e1 = await LenderClient.login({ authUrl: url, ...creds }).then(() => undefined, (e: unknown) => e);
        assert.ok(e1 instanceof InsecureUrlError, String(e1));
        scan.capture('login http error', inspect(e1));
        assert.throws(() => LenderClient.resume({ authUrl: url, lender: 'demo', session: { token: demo.token, refreshToken: demo.refreshToken, lenderPublicId: demo.lenderPublicId } }), InsecureUrlError);
        const e2 = await openSession({ authUrl: url, ...creds, env: {} }).then(() => undefined, (e: unknown) => e);
        assert.ok(e2 instanceof LenderError, String(e2));
        for (const args of [['catalog'], ['export', 'D07'], ['sync', '--out', join(dir, 'http')], ['push', '-']]) {
          const io = memoryIo(isolatedEnv({ LENDER_AUTH_URL: url, LENDER_SUBDOMAIN: 'demo', LENDER_EMAIL: 'a@b.c', LENDER_PASSWORD: creds.password }));
          const code = await main(args, io);
          scan.capture(`${args[0]} http stderr`, io.err());
          assert.equal(code, 2, `${args[0]}: a configuration mistake, exit ${code}`);
          assert.match(io.err(), /https/i, `${args[0]}: the message says why: ${io.err()}`);
        }
        assert.equal(counter.connections(), 0, 'a connection reached the plain-HTTP port');
      } finally {
        await counter.close();
      }
    });

    it('a redirect from https to http is not followed: the token never travels in clear', async () => {
      const counter = await connectionCounter();
      let hostile: HostileServer | undefined;
      try {
        hostile = await startHostileServer();
        hostile.redirectTo = `http://127.0.0.1:${counter.port}/admin/v3/steal`;
        const client = await LenderClient.login({ authUrl: hostile.authUrl, lender: 'demo', email: 'a@b.c', password: 'redirect-password', ca: hostile.ca, retry: { attempts: 2, baseDelayMs: 1 } });
        try {
          hostile.mode = 'redirect';
          const error = await client.fetchPage('D07').then(() => undefined, (e: unknown) => e);
          assert.ok(error instanceof LenderError, String(error));
          scan.capture('redirect error', inspect(error));
        } finally {
          await client.close();
        }
        hostile.loginToo = true;
        const e2 = await LenderClient.login({ authUrl: hostile.authUrl, lender: 'demo', email: 'a@b.c', password: 'redirect-password', ca: hostile.ca }).then(() => undefined, (e: unknown) => e);
        assert.ok(e2 instanceof LenderError, String(e2));
        assert.equal(counter.connections(), 0, 'the client followed a redirect to plain HTTP');
      } finally {
        await hostile?.close();
        await counter.close();
      }
    });
  });

  describe('credentials file', () => {
    it('is refused when others may read it (0644) and used when private (0600)', async () => {
      const c = t.sandbox.credentials('demo');
      const file = join(dir, 'credentials.json');
      await writeFile(file, JSON.stringify({ authUrl: c.authUrl, lender: c.lender, email: c.email, password: c.password, caFile: t.sandbox.caFile }));
      const fileEnv = isolatedEnv({ LENDER_CREDENTIALS_FILE: file });
      const loginsBefore = t.sandbox.stats().logins;

      await chmod(file, 0o644);
      const open = memoryIo(fileEnv);
      const refused = await main(['catalog'], open);
      scan.capture('catalog 0644 stderr', open.err());
      assert.notEqual(refused, 0);
      assert.match(open.err(), /0644/);
      assert.match(open.err(), /credentials\.json/);
      assert.equal(t.sandbox.stats().logins, loginsBefore, 'no login with a readable credentials file');
      for (const mode of [0o640, 0o604, 0o660, 0o666]) {
        await chmod(file, mode);
        assert.notEqual(await main(['catalog'], memoryIo(fileEnv)), 0, `mode ${mode.toString(8)} accepted`);
      }

      await chmod(file, 0o600);
      const ok = memoryIo(fileEnv);
      const accepted = await main(['catalog', '--json'], ok);
      scan.capture('catalog 0600 stdout', ok.out());
      scan.capture('catalog 0600 stderr', ok.err());
      assert.equal(accepted, 0, ok.err());
      assert.equal(JSON.parse(ok.out()).schemaVersion, 'v1');
      assert.equal(t.sandbox.stats().logins, loginsBefore + 1);
    });
  });

  describe('nothing printed or written holds a secret', () => {
    it('library: inspect and JSON of clients, sessions, sandboxes and errors, with 2 s tokens renewed mid-export', async () => {
      const creds = t.sandbox.credentials('demo');
      const client = await LenderClient.login(creds);
      let refreshes = 0;
      client.on('refresh', () => void (refreshes += 1));
      try {
        let rows = 0;
        for await (const _row of exportRows(client, 'D07', { limit: 5 })) {
          // Outlive the 2 s access token once, mid-export.
          if (++rows === 6) await new Promise((r) => setTimeout(r, 2500));
        }
        assert.ok(rows > 10);
        assert.ok(refreshes > 0, 'the token was renewed during the export');
        scan.capture('inspect client', inspect(client, { showHidden: true, depth: 10 }));
        scan.capture('json client', JSON.stringify(client));
        scan.capture('inspect sandbox', inspect(t.sandbox, { depth: 10 }));
        scan.capture('json sandbox', JSON.stringify(t.sandbox));
        const unknown = await client.fetchPage('D04').then(() => undefined, (e: unknown) => e);
        scan.capture('unavailable error', inspect(unknown, { showHidden: true, depth: 10 }));
      } finally {
        await client.close();
      }
      const wrong = await LenderClient.login({ ...creds, password: `${creds.password}x` }).then(() => undefined, (e: unknown) => e);
      assert.ok(wrong instanceof LenderError);
      scan.secret(`${creds.password}x`);
      scan.capture('wrong password error', `${inspect(wrong, { showHidden: true, depth: 10 })}\n${JSON.stringify(wrong)}\n${String(wrong)}`);
      const session = await openSession({ authUrl: creds.authUrl, lender: creds.lender, email: creds.email, password: creds.password, caFile: t.sandbox.caFile, env: {} });
      try {
        scan.capture('inspect session', inspect(session, { showHidden: true, depth: 6 }));
        scan.capture('json session', JSON.stringify(session) ?? '');
      } finally {
        await session.close();
      }
    });

    it('CLI children: catalog, export, sync, push, flag, wrong password, debug stacks; and their files', async (ctx) => {
      const out = join(dir, 'sync');
      const pushFile = join(dir, 'push.ndjson');
      const flagFile = join(dir, 'flags.ndjson');
      await writeFile(pushFile, [
        JSON.stringify({ status: 1, debtorCompanyId: 'S-1', firstName: 'A', lastName: 'B', language: 'en', accountId: 'S-A1', subAccountId: 'S-A1-1', principal: '10' }),
        JSON.stringify({ status: 1, debtorCompanyId: 'S-2', lastName: 'B', language: 'en', accountId: 'S-A2', subAccountId: 'S-A2-1', principal: 'x' }),
        '{"broken',
      ].join('\n'));
      await writeFile(flagFile, `${JSON.stringify({ status: 'doNotContact', debtorCompanyId: 'S-1', accountId: 'S-A1' })}\n{"status": 9}\n`);
      const wrongEnv = { ...env, LENDER_PASSWORD: `${env.LENDER_PASSWORD}-wrong` };
      scan.secret(wrongEnv.LENDER_PASSWORD);
      const runs: [string, string[], NodeJS.ProcessEnv][] = [
        ['catalog', ['catalog'], env],
        ['catalog json', ['catalog', '--json'], env],
        ['export progress', ['export', 'D03', '--progress', '--limit', '7'], env],
        ['sync progress', ['sync', '--out', out, '--datasets', 'D07,D23', '--progress', '--limit', '9'], env],
        ['push', ['push', pushFile, '--rejects', join(dir, 'push.rejects'), '--progress'], env],
        ['flag', ['flag', flagFile, '--rejects', join(dir, 'flag.rejects')], env],
        ['wrong password', ['export', 'D07'], wrongEnv],
        ['wrong password debug', ['sync', '--out', join(dir, 'x')], { ...wrongEnv, LENDER_DEBUG: '1' }],
        ['unavailable debug', ['export', 'D04'], { ...env, LENDER_DEBUG: '1' }],
        ['bad cursor state debug', ['export', 'D07', '--state', join(dir, 'bad-state.json')], { ...env, LENDER_DEBUG: '1' }],
      ];
      await writeFile(join(dir, 'bad-state.json'), '{"version":1,"datasets":{"D07":{"version":1,"dataset":"D07","highWater":null,"load":{"kind":"initial","end":"2030-01-01T00:00:00.000Z","since":null,"until":null,"origin":"2015-01-01T00:00:00.000Z","windowing":{"kind":"single"},"sort":"asc","skip":null,"position":{"window":{"since":"2015-01-01T00:00:00.000Z","until":"2030-01-01T00:00:00.000Z"},"cursor":"not-a-cursor","last":null}}}}}');
      const results: [string, RunResult][] = [];
      const queue = [...runs];
      await Promise.all([0, 1, 2].map(async () => {
        for (let r = queue.shift(); r !== undefined; r = queue.shift()) results.push([r[0], await runLender(r[1], { env: r[2], timeoutMs: 60_000 })]);
      }));
      const codes: Record<string, number | null> = {};
      for (const [name, run] of results) {
        assert.equal(run.timedOut, false, name);
        scan.captureRun(name, run);
        codes[name] = run.code;
      }
      assert.equal(codes.catalog, 0);
      assert.equal(codes['sync progress'], 0);
      assert.equal(codes.push, 3);
      assert.equal(codes['wrong password'], 1);
      for (const name of ['wrong password debug', 'unavailable debug', 'bad cursor state debug']) assert.notEqual(codes[name], 0, name);
      scan.captureFolder('sync folder', out);
      for (const f of ['push.rejects', 'flag.rejects']) if (existsSync(join(dir, f))) scan.capture(f, await readFile(join(dir, f)));
      ctx.diagnostic(`exit codes ${JSON.stringify(codes)}`);
    });

    it('REPL: output and history file after a session that renews its token and is typed a password', async (ctx) => {
      const history = join(dir, 'repl_history');
      const own = await loginTokens(t.agent, t.sandbox.authUrl, 'demo', t.sandbox.credentials('demo').email, t.sandbox.credentials('demo').password);
      scan.secret(own.token, own.refreshToken);
      const input = [
        "await rows('D07', {limit: 2})",
        'whoami()',
        '.whoami',
        'client',
        'session',
        `let pw = ${JSON.stringify(env.LENDER_PASSWORD)};`,
        `let tok = ${JSON.stringify(own.token)};`,
        "await new Promise((r) => setTimeout(r, 2500))",
        "await count('D07')",
        "await rows('D99')",
        'client.stats',
        '.exit',
      ].join('\n') + '\n';
      const run = await runLender(['repl'], { env: { ...env, LENDER_REPL_HISTORY: history }, input, timeoutMs: 60_000 });
      scan.captureRun('repl', run);
      assert.equal(run.timedOut, false);
      assert.equal(run.code, 0, `repl exit ${run.code}: ${run.stderr}`);
      assert.match(run.stdout, /D07|public_id/);
      assert.ok(existsSync(history), 'the history file was written');
      const text = await readFile(history, 'utf8');
      scan.capture('repl history', text);
      assert.match(text, /whoami/);
      ctx.diagnostic(`repl output ${run.stdout.length} bytes, history ${text.split('\n').length} lines`);
    });

    it('the REPL also starts through the entry `npm run repl` uses (node --import tsx src/cli/main.ts repl)', async () => {
      // package.json "repl"/"start" run src/cli/main.ts directly. Node exits 13 (unsettled
      // top-level await) if loading a command module waits on main.ts itself.
      const mainTs = new URL('../../src/cli/main.ts', import.meta.url).pathname;
      const child = spawn(process.execPath, ['--import', 'tsx', mainTs, 'repl', '--help'], { env: isolatedEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      const [code] = (await once(child, 'close')) as [number | null];
      assert.equal(code, 0, `exit ${code}`);
      assert.match(stdout, /^Usage: lender repl/);
    });

    it('stored notebooks hold no token-like string', async () => {
      const folder = new URL('../../notebooks/', import.meta.url).pathname;
      const names = existsSync(folder) ? (await readdir(folder)).filter((n) => n.endsWith('.ipynb')) : [];
      for (const n of names) scan.capture(`notebook ${n}`, await readFile(join(folder, n)));
    });

    it('the scan: no password, access token, refresh token or JWT-looking string anywhere', (ctx) => {
      assert.ok(scan.count > 30 && scan.secretCount >= 6, `${scan.count} captures, ${scan.secretCount} secrets`);
      assert.deepEqual(scan.leaks(), []);
      ctx.diagnostic(`captures=${scan.count} bytes=${scan.bytes} secrets=${scan.secretCount}`);
    });
  });
});
