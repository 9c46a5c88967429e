// A gateway that echoes the request into its error bodies (the Authorization header, all headers,
// and the JSON body: the password at login, the refresh token at refresh) on every endpoint
// family. Nothing the user sees may hold the password, a token, or anything shaped like a bearer
// credential or a JWT: not the library's errors (message, serverMessage, String, inspect with
// causes, JSON), not the 'retry' event, not the CLI's output, not the REPL's. And the marker
// shows that something was cut.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { Agent, request } from 'undici';
import type { RetryEvent } from '../../src/core/api.ts';
import { LenderClient, type LoginOptions } from '../../src/client/client.ts';
import { LenderError } from '../../src/core/errors.ts';
import { REDACTED } from '../../src/core/redact.ts';
import { startHostileServer, type EchoFamily, type EchoSettings, type HostileServer } from '../helpers/hostile-server.ts';
import { isolatedEnv, runLender, type RunResult } from '../helpers/resilience.ts';

const PASSWORD = 'echoed-Passw0rd-k7';
const RETRY = { attempts: 2, baseDelayMs: 1, maxDelayMs: 2 };
const BEARER_LIKE = /Bearer\s+\S{8,}/i;
const JWT_LIKE = /eyJ[\w-]+\.[\w-]+\.[\w-]+/;
/** Words of the echo: where they show, the server's text is shown, so the marker must be too. */
const ECHO_WORDS = 'refused by gateway';
const STATUSES = [400, 401, 403, 404, 500, 504];

/** Everything a user might print of an error, causes included. */
function rendered(error: unknown): string {
  const parts = [String(error), inspect(error, { depth: null }), inspect(error, { depth: null, showHidden: true }), JSON.stringify(error) ?? ''];
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    parts.push(e.message, e.stack ?? '', String((e as LenderError).serverMessage ?? ''));
  }
  return parts.join('\n');
}

describe('a gateway that echoes the request into its errors', () => {
  let server: HostileServer;
  let dir: string;
  let caFile: string;
  let secrets: string[];

  function assertClean(label: string, text: string): void {
    secrets.forEach((s, i) => assert.ok(!text.includes(s), `${label}: holds secret #${i + 1}`));
    assert.doesNotMatch(text, BEARER_LIKE, `${label}: a bearer credential`);
    assert.doesNotMatch(text, JWT_LIKE, `${label}: a JWT`);
  }

  function assertMarked(label: string, text: string): void {
    assert.ok(text.includes(REDACTED), `${label}: the marker is missing from ${JSON.stringify(text.slice(0, 300))}`);
  }

  const login = (extra: Partial<LoginOptions> = {}) => LenderClient.login({
    authUrl: server.authUrl, lender: 'demo', email: 'echo@example.com', password: PASSWORD, ca: server.ca, retry: RETRY, ...extra,
  });

  /** Runs `call`, which turns `echo` on when it is time, and returns what it threw (failing the test if nothing). */
  async function failure(echo: EchoSettings, call: (echo: EchoSettings) => Promise<unknown>): Promise<unknown> {
    server.reset();
    try {
      await call(echo);
    } catch (error) {
      return error;
    } finally {
      server.echo = undefined;
    }
    return assert.fail(`${echo.families.join('+')} ${echo.status} ${echo.format}: no error`);
  }

  before(async () => {
    server = await startHostileServer();
    dir = await mkdtemp(join(tmpdir(), 'lender-echoed-secrets-'));
    caFile = join(dir, 'ca.pem');
    await writeFile(caFile, server.ca);
    // Each JWT's payload and signature segments as well: no part of a token may survive.
    const parts = (jwt: string) => jwt.split('.').slice(1).filter((p) => p.length >= 4);
    secrets = [PASSWORD, server.token, server.refreshToken, ...parts(server.token), ...parts(server.refreshToken)];
  });

  after(async () => {
    await server?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('the echo really carries the secrets (so the checks below can fail)', async () => {
    const agent = new Agent({ connect: { ca: server.ca } });
    try {
      server.echo = { families: ['login'], status: 403, format: 'json' };
      const res = await request(`${server.authUrl}/admin/auth/demo/login`, {
        method: 'POST', dispatcher: agent, body: JSON.stringify({ email: 'e@x.y', password: PASSWORD }),
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      });
      const text = await res.body.text();
      assert.equal(res.statusCode, 403);
      assert.throws(() => assertClean('raw echo', text));
      assert.ok(text.includes(PASSWORD) && text.includes(server.token));
    } finally {
      server.echo = undefined;
      await agent.close();
    }
  });

  describe('library errors, every family, status and body format', () => {
    let client: LenderClient;
    before(async () => {
      client = await login();
    });
    after(async () => {
      await client?.close();
    });

    /** Logs a client in with the echo off, turns it on, and asks for a new access token. */
    const refreshWith = (echo: EchoSettings, seen: RetryEvent[], keepPassword: boolean) => async () => {
      const c = await login({ keepPassword });
      c.on('retry', (e) => seen.push(e));
      server.echo = echo;
      try {
        await c.refresh();
      } finally {
        await c.close();
      }
    };
    const on = (echo: EchoSettings, call: () => Promise<unknown>) => () => {
      server.echo = echo;
      return call();
    };

    interface Case {
      families: EchoFamily[];
      statuses?: number[];
      run(echo: EchoSettings, seen: RetryEvent[]): Promise<unknown>;
    }
    const cases: Case[] = [
      { families: ['login'], run: (echo) => on(echo, () => login())() },
      { families: ['catalog'], run: (echo) => on(echo, () => client.catalog())() },
      { families: ['export'], run: (echo) => on(echo, () => client.fetchPage('D07', { limit: 5 }))() },
      { families: ['accounts'], run: (echo) => on(echo, () => client.upsertAccounts([{ status: 1, accountId: 'A-1', debtorCompanyId: 'C-1' }]))() },
      { families: ['status'], run: (echo) => on(echo, () => client.updateStatus([{ status: 6, accountId: 'A-1', debtorCompanyId: 'C-1' }]))() },
      // No password kept: a refused refresh token ends the session (SessionExpiredError, cause included).
      { families: ['refresh'], run: (echo, seen) => refreshWith(echo, seen, false)() },
      // Password kept: a refused refresh token leads to a login again, which the gateway echoes too.
      { families: ['refresh', 'login'], statuses: [400, 401], run: (echo, seen) => refreshWith(echo, seen, true)() },
    ];

    for (const { families, statuses = STATUSES, run } of cases) {
      for (const format of ['json', 'text'] as const) {
        const label = `${families.join(' then ')} (${format})`;
        it(`${label}: no secret in what the error shows, and the marker where the server's words show`, async () => {
          let marked = 0;
          // A 200 that is not JSON is quoted by the ProtocolError of the non-auth endpoints.
          const auth = families.includes('login') || families.includes('refresh');
          const all = format === 'text' && !auth ? [...statuses, 200] : statuses;
          for (const status of all) {
            const where = `${label} ${status}`;
            const seen: RetryEvent[] = [];
            const onRetry = (e: RetryEvent) => seen.push(e);
            client.on('retry', onRetry);
            let error: unknown;
            try {
              error = await failure({ families, status, format }, (echo) => run(echo, seen));
            } finally {
              client.off('retry', onRetry);
            }
            assert.ok(error instanceof LenderError, `${where}: ${String(error)}`);
            assert.ok(server.echoed > 0, `${where}: the gateway echoed nothing`);
            const text = rendered(error);
            assertClean(where, text);
            for (const event of seen) assertClean(`${where} retry event`, `${inspect(event, { depth: null })}\n${JSON.stringify(event)}`);
            if (text.includes(ECHO_WORDS)) {
              assertMarked(where, text);
              marked += 1;
            }
          }
          // The service's own JSON fields carry the echo into serverMessage whatever the status.
          if (format === 'json') assert.equal(marked, all.length, `${label}: ${marked} of ${all.length} showed the server's words`);
        });
      }
    }
  });

  it("the 'retry' event of a 500 that echoes the header, then success, holds no secret", async () => {
    const client = await login();
    try {
      const events: RetryEvent[] = [];
      client.on('retry', (e) => events.push(e));
      server.reset();
      server.echo = { families: ['catalog'], status: 500, format: 'json', times: 1 };
      const catalog = await client.catalog();
      assert.equal(catalog.schemaVersion, 'v1');
      assert.equal(server.echoed, 1);
      assert.equal(events.length, 1);
      const event = events[0]!;
      assert.ok(event.error instanceof LenderError);
      const text = `${inspect(event, { depth: null, showHidden: true })}\n${JSON.stringify(event)}\n${rendered(event.error)}`;
      assertClean('retry event', text);
      assert.ok(event.error.serverMessage?.includes(ECHO_WORDS));
      assertMarked('retry event', event.error.serverMessage ?? '');
    } finally {
      server.echo = undefined;
      await client.close();
    }
  });

  it('tokens that are not JWTs are cut too, because the client knows its own', async () => {
    const opaque = { token: 'opaque-access-7Qz1x9', refreshToken: 'opaque-refresh-3Vb8n2', lenderPublicId: server.lenderPublicId };
    const client = LenderClient.resume({ authUrl: server.authUrl, lender: 'demo', ca: server.ca, session: opaque, retry: RETRY });
    const events: RetryEvent[] = [];
    client.on('retry', (e) => events.push(e));
    try {
      for (const [families, call] of [[['refresh'], () => client.refresh()], [['catalog'], () => client.catalog()]] as const) {
        // A 500 is retried: the error of the first attempt reaches the 'retry' event, not the caller.
        for (const [status, format] of [[403, 'json'], [403, 'text'], [500, 'json']] as const) {
          const where = `opaque ${families[0]} ${status} (${format})`;
          events.length = 0;
          const error = await failure({ families, status, format }, (echo) => {
            server.echo = echo;
            return call();
          });
          if (status === 500) assert.equal(events.length, RETRY.attempts - 1, `${where}: retry events`);
          const text = [rendered(error), ...events.map((e) => `${inspect(e, { depth: null })}\n${JSON.stringify(e)}`)].join('\n');
          for (const secret of [opaque.token, opaque.refreshToken]) assert.ok(!text.includes(secret), `${where}: a token survived`);
          assertClean(where, text);
          // Auth endpoints' bodies are never quoted when they are not JSON: nothing was shown to cut.
          if (format === 'json' || text.includes(ECHO_WORDS)) assertMarked(where, text);
        }
      }
    } finally {
      await client.close();
    }
  });

  describe('the CLI and the REPL, run as the user runs them', () => {
    let env: NodeJS.ProcessEnv;
    let pushFile: string;
    let flagFile: string;

    before(async () => {
      env = isolatedEnv({
        LENDER_AUTH_URL: server.authUrl, LENDER_SUBDOMAIN: 'demo', LENDER_EMAIL: 'echo@example.com',
        LENDER_PASSWORD: PASSWORD, LENDER_CA_FILE: caFile, LENDER_REPL_HISTORY: '',
      });
      pushFile = join(dir, 'push.ndjson');
      flagFile = join(dir, 'flag.ndjson');
      await writeFile(pushFile, `${JSON.stringify({
        status: 1, debtorCompanyId: 'C-1', firstName: 'A', lastName: 'B', language: 'en', accountId: 'A-1', subAccountId: 'A-1-1', principal: '10',
      })}\n`);
      await writeFile(flagFile, `${JSON.stringify({ status: 'doNotContact', debtorCompanyId: 'C-1', accountId: 'A-1' })}\n`);
    });

    /** Runs one command with the echo on and checks everything it printed. */
    async function check(label: string, args: string[], echo: EchoSettings, input?: string): Promise<RunResult> {
      server.echo = echo;
      server.reset();
      let run: RunResult;
      try {
        run = await runLender(args, { env, timeoutMs: 60_000, ...(input !== undefined && { input }) });
      } finally {
        server.echo = undefined;
      }
      assert.equal(run.timedOut, false, `${label}: timed out`);
      assert.ok(server.echoed > 0, `${label}: the gateway echoed nothing; stderr: ${run.stderr}`);
      assertClean(`${label} stdout`, run.stdout);
      assertClean(`${label} stderr`, run.stderr);
      assertMarked(label, `${run.stdout}\n${run.stderr}`);
      return run;
    }

    it('lender catalog: login, refresh and catalog echoed', async () => {
      const loginRun = await check('catalog, login echoed', ['catalog'], { families: ['login'], status: 403, format: 'json' });
      assert.equal(loginRun.code, 1);
      assert.equal(loginRun.stdout, '');
      assert.match(loginRun.stderr, /^lender catalog: The service refused POST \/admin\/auth\/demo\/login \(403: Request refused by gateway/);

      const catalogRun = await check('catalog, catalog echoed', ['catalog'], { families: ['catalog'], status: 403, format: 'json' });
      assert.equal(catalogRun.code, 1);
      assert.equal(catalogRun.stdout, '');

      // A 401 on the catalog makes the client renew its token: the refresh is echoed.
      const refreshRun = await check('catalog, refresh echoed', ['catalog'], {
        families: ['catalog', 'refresh'], status: 401, statusOf: { refresh: 403 }, format: 'json',
      });
      assert.equal(refreshRun.code, 1);
      assert.match(refreshRun.stderr, /refresh-token \(403: Request refused by gateway/);
    });

    it('lender export: an echoed page error, JSON and plain text', async () => {
      const json = await check('export json', ['export', 'D07', '--window', 'none'], { families: ['export'], status: 403, format: 'json' });
      assert.equal(json.code, 1);
      assert.equal(json.stdout, '');
      const text = await check('export text', ['export', 'D07', '--window', 'none'], { families: ['export'], status: 404, format: 'text' });
      assert.equal(text.code, 1);
    });

    it('lender push and lender flag: echoed 400s (rejects named) and 403s', async () => {
      for (const [name, file, family] of [['push', pushFile, 'accounts'], ['flag', flagFile, 'status']] as const) {
        const named = await check(`${name} 400`, [name, file], { families: [family], status: 400, format: 'json' });
        assert.equal(named.code, 3, `${name} 400: ${named.stderr}`);
        const refused = await check(`${name} 403`, [name, file], { families: [family], status: 403, format: 'json' });
        assert.notEqual(refused.code, 0, `${name} 403: ${refused.stderr}`);
      }
    });

    it('lender repl: an echoed error, its stack, and values that hold a secret', async () => {
      const input = [
        "await rows('D07')",
        '.stack',
        'process.env.LENDER_PASSWORD',
        "'Authorization: Bearer ' + 'abcdefghijklmnop'",
        '.exit',
      ].join('\n') + '\n';
      const run = await check('repl', ['repl'], { families: ['export'], status: 403, format: 'json' }, input);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /refused by gateway/);
      assert.match(run.stdout, /'\[redacted\]'/);
      assert.match(run.stdout, /'Authorization: \[redacted\]'/);
    });
  });
});
