// A 50 MB body, five times the 10 MiB limit, over real HTTPS from node:https and undici, with a
// Content-Length and chunked: the client receives the 413 in full (not a reset), the connection
// is then closed, and the sandbox keeps serving.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { openUpload, uploadUntilAnswered, within } from '../helpers/upload.ts';
import { startTestSandbox, type Session, type TestSandbox } from '../helpers/sandbox.ts';

const LIMIT = 10 * 1024 * 1024;
const TOTAL = 50 * 1024 * 1024;
const TOO_LARGE = { error: `Request body is larger than the limit of ${LIMIT} bytes.` };

let t: TestSandbox;
let demo: Session;
before(async () => {
  t = await startTestSandbox();
  demo = await t.loginAs('demo');
});
after(() => t.close());

const accounts = (): string => `/admin/v3/lenders/${demo.lenderPublicId}/accounts`;

async function assertServing(): Promise<void> {
  const res = await t.request('POST', accounts(), { token: demo.token, body: { accounts: [] } });
  assert.equal(res.status, 200);
  assert.equal(t.sandbox.stats().bufferedBytes, 0);
}

describe('a body over the limit', () => {
  for (const [how, contentLength] of [['with Content-Length: 413 before any of the body is read', TOTAL], ['chunked: 413 once the count passes the limit', undefined]] as const) {
    it(`node:https ${how}`, async () => {
      const upload = openUpload({ origin: t.sandbox.authUrl, ca: t.sandbox.ca, path: accounts(), token: demo.token, ...(contentLength !== undefined && { contentLength }) });
      const answer = await within(uploadUntilAnswered(upload, TOTAL), 60_000, 'no answer to the 50 MB upload');
      assert.equal(answer.status, 413);
      assert.deepEqual(answer.body, TOO_LARGE);
      assert.equal(answer.headers.connection, 'close');
      assert.ok(answer.sentBeforeAnswer < TOTAL, `the answer came after all ${TOTAL} bytes were sent`);
      await assertServing();
    });
  }

  it('undici, from a Buffer and from a stream: the request resolves with the 413', async () => {
    const big = Buffer.alloc(TOTAL, 0x20);
    const streamed = (): Readable => Readable.from((function* () {
      for (let at = 0; at < TOTAL; at += 64 * 1024) yield big.subarray(at, at + 64 * 1024);
    })());
    for (const [what, body] of [['Content-Length', () => big], ['chunked', streamed]] as const) {
      const res = await within(
        request(`${t.sandbox.authUrl}${accounts()}`, {
          method: 'POST', dispatcher: t.agent, body: body(),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${demo.token}` },
        }),
        60_000, `undici ${what}: no answer`,
      );
      assert.equal(res.statusCode, 413, what);
      assert.deepEqual(await res.body.json(), TOO_LARGE, what);
      assert.equal(res.headers.connection, 'close', what);
    }
    await assertServing();
  });
});
