// A request the sandbox will refuse (no such path, wrong method, no or bad token, another tenant)
// is answered on its headers: the client announces a 10 MB body, sends a little of it and waits,
// and the answer comes anyway, with nothing of the body held by the server and the connection
// closed so the unread rest cannot be taken for a next request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openUpload, within, type UploadAnswer } from '../helpers/upload.ts';
import { startTestSandbox, type Session, type TestSandbox } from '../helpers/sandbox.ts';

const ANNOUNCED = 10 * 1024 * 1024;
const SENT = 64 * 1024;

let t: TestSandbox;
let demo: Session;
let other: Session;
before(async () => {
  t = await startTestSandbox();
  demo = await t.loginAs('demo');
  other = await t.loginAs('other');
});
after(() => t.close());

/** Announces ANNOUNCED bytes, sends SENT of them, and waits for the answer without sending more. */
async function refusedEarly(
  method: string, path: string, opts: { token?: string; chunked?: boolean } = {},
): Promise<UploadAnswer> {
  const peakBefore = t.sandbox.stats().bufferedBytesPeak;
  const upload = openUpload({
    origin: t.sandbox.authUrl, ca: t.sandbox.ca, method, path,
    ...(opts.token !== undefined && { token: opts.token }),
    ...(opts.chunked ? {} : { contentLength: ANNOUNCED }),
  });
  try {
    await upload.write(Buffer.alloc(SENT, 0x20));
    const answer = await within(upload.answer, 10_000, `${method} ${path}: no answer while its body was unfinished`);
    assert.equal(answer.headers.connection, 'close', `${method} ${path} closes the connection`);
    assert.equal(answer.headers['content-type'], 'application/json');
    const stats = t.sandbox.stats();
    assert.equal(stats.bufferedBytes, 0, 'nothing of the body is held');
    assert.equal(stats.bufferedBytesPeak, peakBefore, 'nothing of the body was ever held');
    return answer;
  } finally {
    upload.destroy();
  }
}

const accountsPath = (session: Session, tail = 'accounts'): string => `/admin/v3/lenders/${session.lenderPublicId}/${tail}`;

describe('refusals decided on the headers', () => {
  it('answers an unknown path with 404 before the body', async () => {
    for (const chunked of [false, true]) {
      const res = await refusedEarly('POST', '/no/such/path', { chunked });
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { error: 'No endpoint matches POST /no/such/path.' });
    }
  });

  it('answers a wrong method with 405 before the body', async () => {
    const res = await refusedEarly('PUT', accountsPath(demo), { token: demo.token });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'POST');
  });

  it('answers a missing, garbage or refresh token with the documented 401 before the body', async () => {
    for (const token of [undefined, 'garbage', demo.refreshToken]) {
      for (const tail of ['accounts', 'accounts/update-status']) {
        const res = await refusedEarly('POST', accountsPath(demo, tail), { ...(token !== undefined && { token }), chunked: tail !== 'accounts' });
        assert.equal(res.status, 401, `${tail} with token ${String(token).slice(0, 8)}`);
        assert.deepEqual(res.body, { error: 'Unauthorized' });
      }
    }
  });

  it("answers another tenant's path with 401 before the body", async () => {
    const res = await refusedEarly('POST', accountsPath(other), { token: demo.token });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'Unauthorized' });
  });

  it('answers an export request without a token in the export shape, not reading the body it carries', async () => {
    const res = await refusedEarly('GET', accountsPath(demo, 'exports/catalog'));
    assert.equal(res.status, 401);
    assert.deepEqual(Object.keys(res.body).sort(), ['message', 'requestId', 'success']);
    assert.equal(res.body.requestId, res.headers['x-request-id']);
  });

  it('answers Expect: 100-continue with the refusal instead of inviting the body, and invites it when it will be read', async () => {
    const expecting = (path: string, token?: string) => {
      const upload = openUpload({
        origin: t.sandbox.authUrl, ca: t.sandbox.ca, path, contentLength: 15,
        headers: { expect: '100-continue' }, ...(token !== undefined && { token }),
      });
      let invited = false;
      upload.request.once('continue', () => {
        invited = true;
        upload.end(Buffer.from('{"accounts":[]}'));
      });
      return { upload, invited: () => invited };
    };
    const refused = expecting(accountsPath(demo));
    const answer = await within(refused.upload.answer, 10_000, 'no answer to a request expecting 100-continue');
    refused.upload.destroy();
    assert.equal(answer.status, 401);
    assert.equal(refused.invited(), false, 'a refused request is not invited to send its body');

    const served = expecting(accountsPath(demo), demo.token);
    const ok = await within(served.upload.answer, 10_000, 'no answer to an invited request');
    assert.equal(served.invited(), true);
    assert.equal(ok.status, 200, ok.text);
  });

  it('keeps serving everyone else, on kept-alive connections too', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t.request('GET', accountsPath(demo, 'exports/catalog'), { token: demo.token });
      assert.equal(res.status, 200);
      assert.notEqual(res.headers.connection, 'close');
    }
    const refused = await t.request('POST', accountsPath(demo), { token: 'garbage', body: { accounts: [] } });
    assert.equal(refused.status, 401);
    const pushed = await t.request('POST', accountsPath(demo), { token: demo.token, body: { accounts: [] } });
    assert.equal(pushed.status, 200);
    assert.equal(t.sandbox.stats().bufferedBytes, 0);
  });
});
