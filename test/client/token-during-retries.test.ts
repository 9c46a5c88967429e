// Retries that outlast the access token: every attempt is sent with the session's current token,
// so proactive refresh keeps a long run of retries authenticated. A server that checks the token
// before anything else (as a gateway may) answers an attempt sent with an expired token with 401.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { LenderClient } from '../../src/client/client.ts';
import { generateTls } from '../../src/sandbox/tls.ts';

const TOKEN_SECONDS = 2;
/** Every call fails with a 500 for this long: more than two token lifetimes. */
const FAILING_MS = 4500;

function jwt(expSeconds: number): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ lenderId: 'x', typ: 'access', iat, exp: iat + expSeconds })}.sig`;
}

function expired(token: string): boolean {
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { exp: number };
  return payload.exp * 1000 <= Date.now();
}

let server: https.Server;
let authUrl: string;
let ca: string;
let failingUntil = 0;
const seen = { unauthorized: 0, failed: 0, refreshes: 0 };

before(async () => {
  const tls = await generateTls('127.0.0.1', 'token test server');
  ca = tls.cert;
  const lenderPublicId = randomUUID();
  server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    req.resume();
    req.on('end', () => {
      if (req.url?.endsWith('/login')) return json(200, { token: jwt(TOKEN_SECONDS), refreshToken: 'refresh', lenderPublicId });
      if (req.url?.endsWith('/refresh-token')) {
        seen.refreshes += 1;
        return json(200, { token: jwt(TOKEN_SECONDS) });
      }
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (expired(token)) {
        seen.unauthorized += 1;
        return json(401, { success: false, message: 'Access denied. Invalid token.', requestId: randomUUID() });
      }
      if (Date.now() < failingUntil) {
        seen.failed += 1;
        return json(500, { success: false, message: 'Something went wrong.', requestId: randomUUID() });
      }
      return json(200, { code: 200, message: 'success', errors: [], body: { schemaVersion: 'v1', sections: [] } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  authUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('a call whose retries outlast two token lifetimes still succeeds, never sending an expired token', async () => {
  const client = await LenderClient.login({
    authUrl, lender: 'demo', email: 'a@b.c', password: 'not-a-real-secret', ca,
    retry: { attempts: 200, baseDelayMs: 50, maxDelayMs: 100, maxElapsedMs: 30_000 },
  });
  try {
    failingUntil = Date.now() + FAILING_MS;
    const catalog = await client.catalog();
    assert.equal(catalog.schemaVersion, 'v1');
    assert.ok(seen.failed > 10, `the call was retried through the failures (${seen.failed})`);
    assert.ok(seen.refreshes >= 2, `the token was renewed along the way (${seen.refreshes})`);
    assert.equal(seen.unauthorized, 0, 'no attempt went out with an expired token');
  } finally {
    await client.close();
  }
});
