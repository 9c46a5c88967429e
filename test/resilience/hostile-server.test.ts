// Hostile server: a server that logs the client in and then answers badly. The
// client, the export stream and the CLI must fail with a typed error and one clear sentence, or
// stop at a safety bound, within a bounded number of requests; never loop forever, never crash.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../src/cli/main.ts';
import { LenderClient } from '../../src/client/client.ts';
import { LenderError } from '../../src/core/errors.ts';
import { exportPages, exportRows } from '../../src/exports/index.ts';
import { HOSTILE_ROW, startHostileServer, type HostileMode, type HostileServer } from '../helpers/hostile-server.ts';
import { SecretScan, isolatedEnv } from '../helpers/resilience.ts';
import { memoryIo } from '../helpers/memory-io.ts';

const RETRY = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 };
const BAD_ANSWERS: HostileMode[] = ['truncated-json', 'html-error', 'html-200', 'wrong-content-type', 'wrong-shape', 'json-null'];
/** Pages an export may read from a server that never ends before the test calls it a loop. */
const LOOP_CAP = 1000;
const STACK = /\n\s+at .+:\d+:\d+/;


function assertClearError(error: unknown, what: string): LenderError {
  assert.ok(error instanceof LenderError, `${what}: ${String(error)} is not a LenderError`);
  assert.ok(error.message.length > 20 && error.message.length < 400, `${what}: message "${error.message}"`);
  assert.doesNotMatch(error.message, /\n/, `${what}: message is one line`);
  return error;
}

describe('hostile server answers', () => {
  let server: HostileServer;
  let dir: string;
  let caFile: string;
  const scan = new SecretScan();
  const login = () => LenderClient.login({ authUrl: server.authUrl, lender: 'demo', email: 'a@b.c', password: 'hostile-password-1', ca: server.ca, retry: RETRY });

  before(async () => {
    server = await startHostileServer();
    dir = await mkdtemp(join(tmpdir(), 'lender-hostile-server-'));
    caFile = join(dir, 'ca.pem');
    await writeFile(caFile, server.ca);
    scan.secret('hostile-password-1');
  });

  after(async () => {
    await server?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('control: a well-formed answer is read as is', async () => {
    server.mode = 'ok';
    const client = await login();
    try {
      const rows = await exportRows(client, 'D07', { window: 'none' }).toArray();
      assert.deepEqual(rows, [HOSTILE_ROW]);
    } finally {
      await client.close();
    }
  });

  for (const mode of BAD_ANSWERS) {
    it(`${mode}: fetchPage and exportRows fail with a typed error after a bounded number of requests`, async () => {
      server.mode = 'ok';
      const client = await login();
      try {
        server.mode = mode;
        server.reset();
        const e1 = await client.fetchPage('D07').then(() => undefined, (e: unknown) => e);
        const err = assertClearError(e1, `fetchPage (${mode})`);
        scan.capture(`fetchPage ${mode} error`, `${err.name}: ${err.message}`);
        assert.ok(server.pages <= RETRY.attempts, `${mode}: ${server.pages} requests for one page`);
        server.reset();
        const e2 = await exportRows(client, 'D07', { window: 'none' }).toArray().then(() => undefined, (e: unknown) => e);
        assertClearError(e2, `exportRows (${mode})`);
        assert.ok(server.pages <= RETRY.attempts, `${mode}: ${server.pages} requests for one export`);
      } finally {
        await client.close();
      }
    });
  }

  it('bad answers to login fail the login with a typed error that quotes no body', async () => {
    server.loginToo = true;
    try {
      for (const mode of BAD_ANSWERS) {
        server.mode = mode;
        const error = await login().then(() => undefined, (e: unknown) => e);
        const err = assertClearError(error, `login (${mode})`);
        scan.capture(`login ${mode} error`, err.message);
      }
    } finally {
      server.loginToo = false;
    }
  });

  it('lender export against each bad answer: exit 1 with one clear line on stderr, nothing on stdout', async () => {
    const env = isolatedEnv({
      LENDER_AUTH_URL: server.authUrl, LENDER_SUBDOMAIN: 'demo', LENDER_EMAIL: 'a@b.c',
      LENDER_PASSWORD: 'hostile-password-1', LENDER_CA_FILE: caFile,
    });
    for (const mode of BAD_ANSWERS) {
      server.mode = mode;
      const io = memoryIo(env);
      const code = await main(['export', 'D07', '--window', 'none'], io);
      scan.capture(`export ${mode} stdout`, io.out());
      scan.capture(`export ${mode} stderr`, io.err());
      assert.equal(code, 1, `${mode}: exit ${code}: ${io.err()}`);
      assert.equal(io.out(), '', `${mode}: stdout`);
      assert.match(io.err(), /^lender export: \S.{15,}\n$/, `${mode}: ${io.err()}`);
      assert.doesNotMatch(io.err(), STACK);
    }
  });

  for (const mode of ['repeat-cursor', 'endless-same-rows'] as const) {
    it(`${mode}: the export stream stops (fails clearly or at a safety bound) instead of looping forever`, async (ctx) => {
      server.mode = 'ok';
      const client = await login();
      server.mode = mode;
      server.reset();
      const stream = exportPages(client, 'D07', { window: 'none' });
      let pages = 0;
      let outcome: 'ended' | 'failed' | 'looping' = 'ended';
      let failure: unknown;
      try {
        for await (const _page of stream) {
          pages += 1;
          if (pages >= LOOP_CAP) {
            outcome = 'looping';
            break;
          }
        }
      } catch (error) {
        outcome = 'failed';
        failure = error;
      } finally {
        stream.destroy();
        await client.close();
      }
      ctx.diagnostic(`${mode}: outcome=${outcome} after ${pages} pages, ${server.pages} requests`);
      assert.notEqual(outcome, 'looping', `the export read ${pages} pages of a cursor that never ends and was still going`);
      if (outcome === 'failed') assertClearError(failure, mode);
    });
  }

  it('endless-empty: a cursor that never ends can always be stopped by the caller, and requests stop with it', async () => {
    server.mode = 'ok';
    const client = await login();
    server.mode = 'endless-empty';
    server.reset();
    const controller = new AbortController();
    const stream = exportPages(client, 'D07', { window: 'none', signal: controller.signal });
    let pages = 0;
    let failure: unknown;
    try {
      for await (const _page of stream) {
        if (++pages === 200) controller.abort();
        assert.ok(pages < LOOP_CAP, 'the abort did not stop the stream');
      }
    } catch (error) {
      failure = error;
    } finally {
      await client.close();
    }
    assert.equal((failure as Error)?.name, 'AbortError');
    const after = server.pages;
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(server.pages, after, 'requests went on after the abort');
    assert.ok(after <= 202, `${after} requests for 200 pages`);
  });

  it('printed no password or token', () => {
    assert.ok(scan.count > 0);
    assert.deepEqual(scan.leaks(), []);
  });
});
