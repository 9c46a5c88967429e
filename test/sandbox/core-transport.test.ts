// HTTPS only, bad input of every kind, and the server still serving after each.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const MAX_BODY = 64 * 1024;
let t: TestSandbox;
before(async () => {
  t = await startTestSandbox({ maxBodyBytes: MAX_BODY });
});
after(() => t.close());

/** Login still works: the server survived whatever the test just did. */
async function assertServing(): Promise<void> {
  const session = await t.loginAs('demo');
  assert.equal(typeof session.token, 'string');
}

/** Raw bytes to the port, collecting whatever comes back until the peer closes. */
function rawExchange(port: number, payload: string): Promise<{ received: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (d: string) => (received += d));
    socket.on('error', (e: NodeJS.ErrnoException) => resolve({ received, error: e.code ?? e.message }));
    socket.on('close', () => resolve({ received }));
    socket.setTimeout(5000, () => socket.destroy());
  });
}

describe('TLS', () => {
  it('is refused by a client that does not trust the sandbox CA', async () => {
    const plain = new Agent();
    try {
      await assert.rejects(
        request(`${t.sandbox.authUrl}/__sandbox/stats`, { dispatcher: plain }),
        (error: Error & { code?: string }) => /SELF_SIGNED|self-signed|certificate/i.test(`${error.code} ${error.message}`),
      );
    } finally {
      await plain.close();
    }
  });

  it('is accepted with the CA, in memory or from caFile, for 127.0.0.1 and localhost', async () => {
    assert.ok(existsSync(t.sandbox.caFile));
    assert.equal(await readFile(t.sandbox.caFile, 'utf8'), t.sandbox.ca);
    assert.match(t.sandbox.authUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(t.sandbox.baseUrl, `${t.sandbox.authUrl}/admin/v3`);
    const viaLocalhost = new Agent({ connect: { ca: await readFile(t.sandbox.caFile, 'utf8') } });
    try {
      const res = await request(`https://localhost:${t.sandbox.port}/__sandbox/stats`, { dispatcher: viaLocalhost });
      assert.equal(res.statusCode, 200);
      await res.body.json();
    } finally {
      await viaLocalhost.close();
    }
  });

  it('never serves plain HTTP on the port', async () => {
    const tlsErrorsBefore = t.sandbox.stats().tlsErrors ?? 0;
    const raw = await rawExchange(t.sandbox.port, 'GET /__sandbox/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    assert.doesNotMatch(raw.received, /^HTTP\/1\.[01] [1-5]\d\d/, 'no HTTP response to plain HTTP');
    assert.doesNotMatch(raw.received, /logins/);
    assert.equal((t.sandbox.stats().tlsErrors ?? 0), tlsErrorsBefore + 1);

    const viaHttp = await new Promise<number | string>((resolve) => {
      http.get(`http://127.0.0.1:${t.sandbox.port}/__sandbox/stats`, (res) => resolve(res.statusCode ?? 0))
        .on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    assert.equal(typeof viaHttp, 'string', `plain HTTP got status ${viaHttp}`);
    await assertServing();
  });

  it('answers HTTP garbage inside TLS with a JSON 400 and keeps serving', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: t.sandbox.port, ca: t.sandbox.ca }, () => {
        socket.write('THIS IS NOT HTTP\r\n\r\n');
      });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (text += d));
      socket.on('end', () => resolve(text));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 400/);
    assert.match(answer, /content-type: application\/json/i);
    await assertServing();
  });
});

describe('routing and bodies', () => {
  it('a path starting with // is that path: not a host and the rest (which would serve /admin/… to //x/admin/…)', async () => {
    const demo = await t.loginAs('demo');
    const catalog = `/admin/v3/lenders/${demo.lenderPublicId}/exports/catalog`;
    assert.equal((await t.request('GET', catalog, { token: demo.token })).status, 200);
    for (const path of [`//x${catalog}`, `//${catalog.slice(1)}`]) {
      const res = await t.request('GET', path, { token: demo.token });
      assert.equal(res.status, 404, path);
      assert.ok(!JSON.stringify(res.body).includes('"sections"'), path);
    }
    const email = t.sandbox.credentials('demo');
    const login = await t.request('POST', '//elsewhere.example/admin/auth/demo/login', { body: { email: email.email, password: email.password } });
    assert.equal(login.status, 404);
    await assertServing();
  });

  it('answers an unknown path with a JSON 404', async () => {
    for (const path of ['/', '/nothing/here', '/admin/v3/lenders', '/__sandbox/nope']) {
      const res = await t.request('GET', path);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.match(res.body.error, /No endpoint matches GET/);
    }
    await assertServing();
  });

  it('answers a wrong method with a JSON 405 and an Allow header', async () => {
    const login = await t.request('GET', '/admin/auth/demo/login');
    assert.equal(login.status, 405);
    assert.equal(login.headers.allow, 'POST');
    assert.match(login.body.error, /Method GET is not allowed .* use POST/);
    const stats = await t.request('DELETE', '/__sandbox/stats');
    assert.equal(stats.status, 405);
    assert.equal(stats.headers.allow, 'GET');
    await assertServing();
  });

  it('answers a wrong method on an export endpoint in the export error shape (the documented export error shape)', async () => {
    const session = await t.loginAs('demo');
    for (const path of ['exports/catalog', 'exports/S2/D07']) {
      const res = await t.request('POST', `/admin/v3/lenders/${session.lenderPublicId}/${path}`, { token: session.token, body: {} });
      assert.equal(res.status, 405, path);
      assert.equal(res.headers.allow, 'GET');
      assert.deepEqual(Object.keys(res.body).sort(), ['message', 'requestId', 'success'], path);
      assert.equal(res.body.success, false);
      assert.match(res.body.message, /Method POST is not allowed .* use GET/);
      assert.equal(res.body.requestId, res.headers['x-request-id']);
    }
    const onAccounts = await t.request('GET', `/admin/v3/lenders/${session.lenderPublicId}/accounts`, { token: session.token });
    assert.equal(onAccounts.status, 405);
    assert.deepEqual(Object.keys(onAccounts.body), ['error'], 'account routes keep { error }');
    await assertServing();
  });

  it('answers a body over the limit with 413 and keeps serving', async () => {
    const { email } = t.sandbox.credentials('demo');
    const huge = JSON.stringify({ email, password: 'x'.repeat(MAX_BODY) });
    const res = await t.request('POST', '/admin/auth/demo/login', { rawBody: huge });
    assert.equal(res.status, 413);
    assert.equal(res.body.error, `Request body is larger than the limit of ${MAX_BODY} bytes.`);
    const session = await t.loginAs('demo');
    const onAccounts = await t.request('POST', `/admin/v3/lenders/${session.lenderPublicId}/accounts`, {
      token: session.token, rawBody: Buffer.alloc(MAX_BODY * 2, 0x20),
    });
    assert.equal(onAccounts.status, 413);
    await assertServing();
  });

  it('answers a non-JSON account body with the documented 400 shape (message null, one entry)', async () => {
    const session = await t.loginAs('demo');
    for (const path of ['accounts', 'accounts/update-status']) {
      const res = await t.request('POST', `/admin/v3/lenders/${session.lenderPublicId}/${path}`, {
        token: session.token, rawBody: '{"accounts": [',
      });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        code: 400, message: null, body: '', errors: [{ accountId: '', errors: ['Request body must be valid JSON.'] }],
      });
    }
    await assertServing();
  });

  it('survives wrong types on every route', async () => {
    const session = await t.loginAs('demo');
    const bodies = ['"text"', '42', 'null', '[]', '{"accounts":"x"}', '{"accounts":[1,null,"a"]}', '{"accounts":{}}'];
    for (const raw of bodies) {
      for (const path of ['accounts', 'accounts/update-status']) {
        const res = await t.request('POST', `/admin/v3/lenders/${session.lenderPublicId}/${path}`, { token: session.token, rawBody: raw });
        assert.ok(res.status === 400, `${path} ${raw} -> ${res.status} ${res.text}`);
        assert.equal(res.headers['content-type'], 'application/json');
      }
      const faults = await t.request('POST', '/__sandbox/faults', { rawBody: raw });
      assert.equal(faults.status, 400, `faults ${raw}`);
    }
    await assertServing();
  });

  it('gives every answer a JSON content type and a request id', async () => {
    const res = await t.request('GET', '/__sandbox/stats');
    assert.equal(res.headers['content-type'], 'application/json');
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('counts service requests, not admin ones', async () => {
    const before = t.sandbox.stats().requests;
    await t.request('GET', '/__sandbox/stats');
    await t.request('POST', '/__sandbox/faults', { body: {} });
    assert.equal(t.sandbox.stats().requests, before);
    await t.request('GET', '/not/a/route');
    await t.loginAs('demo');
    assert.equal(t.sandbox.stats().requests, before + 2);
  });
});
