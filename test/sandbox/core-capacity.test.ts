// The sandbox's two capacity limits, connections served at once and request-body bytes held at
// once: past either a request is answered 503 with Retry-After in its endpoint's error shape,
// and whatever was already being served carries on.
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { parseSandboxArgs } from '../../src/cli/commands/sandbox.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { resolveOptions } from '../../src/sandbox/options.ts';
import { requestJson, type JsonResponse, type Session } from '../helpers/sandbox.ts';
import { openUpload, until, within } from '../helpers/upload.ts';

const MAX_CONNECTIONS = 3;
const MAX_BODY = 100_000;
const MAX_BUFFERED = 150_000;

let sandbox: Sandbox;
let demo: Session;
before(async () => {
  sandbox = await startSandbox({ scale: 20, maxConnections: MAX_CONNECTIONS, maxBodyBytes: MAX_BODY, maxBufferedBytes: MAX_BUFFERED });
  const agent = new Agent({ connect: { ca: sandbox.ca } });
  const { email, password } = sandbox.credentials('demo');
  const res = await requestJson(agent, sandbox.authUrl, 'POST', '/admin/auth/demo/login', { body: { email, password } });
  assert.equal(res.status, 200);
  demo = res.body as Session;
  await agent.close();
  await until(() => sandbox.stats().connections, 0, 5000, 'connections');
});
after(() => sandbox.close());

/** One request on a connection of its own, so each is subject to the connection limit. */
async function fresh(method: string, path: string, opts: { token?: string; body?: unknown; rawBody?: string } = {}): Promise<JsonResponse> {
  const agent = new Agent({ connect: { ca: sandbox.ca } });
  try {
    return await requestJson(agent, sandbox.authUrl, method, path, opts);
  } finally {
    await agent.close();
  }
}

const catalog = (): string => `/admin/v3/lenders/${demo.lenderPublicId}/exports/catalog`;
const accounts = (): string => `/admin/v3/lenders/${demo.lenderPublicId}/accounts`;

function assertBusy(res: JsonResponse, shape: 'export' | 'accounts'): void {
  assert.equal(res.status, 503, res.text);
  assert.equal(res.headers['retry-after'], '1');
  assert.equal(res.headers.connection, 'close');
  if (shape === 'export') {
    assert.deepEqual(res.body, { success: false, message: 'Service unavailable', requestId: res.headers['x-request-id'] });
  } else {
    assert.deepEqual(res.body, { error: 'Service unavailable. Please try again later.' });
  }
}

function openTls(): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: sandbox.host, port: sandbox.port, ca: sandbox.ca }, () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('connection limit', () => {
  it('answers a connection beyond the limit 503 with Retry-After, and serves again once one closes', async () => {
    const held: tls.TLSSocket[] = [];
    try {
      for (let i = 0; i < MAX_CONNECTIONS; i++) held.push(await openTls());
      await until(() => sandbox.stats().connections, MAX_CONNECTIONS, 5000, 'connections');
      const before = sandbox.stats().overCapacity ?? 0;

      assertBusy(await fresh('GET', catalog(), { token: demo.token }), 'export');
      assertBusy(await fresh('POST', accounts(), { token: demo.token, body: { accounts: [] } }), 'accounts');
      const unknown = await fresh('GET', '/no/such/path');
      assert.equal(unknown.status, 503);
      assert.equal(unknown.headers['retry-after'], '1');
      assert.equal(sandbox.stats().overCapacity, before + 3);
      assert.equal(sandbox.stats().connections, MAX_CONNECTIONS, 'refused connections are not counted');

      held.pop()!.destroy();
      await until(() => sandbox.stats().connections, MAX_CONNECTIONS - 1, 5000, 'connections');
      const served = await fresh('GET', catalog(), { token: demo.token });
      assert.equal(served.status, 200);
    } finally {
      for (const socket of held) socket.destroy();
    }
    await until(() => sandbox.stats().connections, 0, 5000, 'connections');
  });

  it('refuses an over-limit upload without reading its body', async () => {
    const held: tls.TLSSocket[] = [];
    try {
      for (let i = 0; i < MAX_CONNECTIONS; i++) held.push(await openTls());
      await until(() => sandbox.stats().connections, MAX_CONNECTIONS, 5000, 'connections');
      const upload = openUpload({ origin: sandbox.authUrl, ca: sandbox.ca, path: accounts(), token: demo.token, contentLength: MAX_BODY });
      await upload.write(Buffer.alloc(1000, 0x20));
      const answer = await within(upload.answer, 10_000, 'no answer while the body was unfinished');
      upload.destroy();
      assert.equal(answer.status, 503);
      assert.equal(answer.headers['retry-after'], '1');
      assert.equal(sandbox.stats().bufferedBytes, 0);
    } finally {
      for (const socket of held) socket.destroy();
    }
    await until(() => sandbox.stats().connections, 0, 5000, 'connections');
  });
});

describe('buffered-bytes budget', () => {
  it('answers a body that does not fit beside the ones being read 503 with Retry-After', async () => {
    // A holds MAX_BODY of the MAX_BUFFERED budget from its headers on, while its body trickles in.
    const a = openUpload({ origin: sandbox.authUrl, ca: sandbox.ca, path: accounts(), token: demo.token, contentLength: MAX_BODY });
    const start = Buffer.from('{"accounts":[]}');
    try {
      await a.write(start);
      await until(() => sandbox.stats().bufferedBytes, MAX_BODY, 5000, 'bufferedBytes');

      // Declared length over what is left: refused on its headers.
      const declared = await fresh('POST', accounts(), { token: demo.token, rawBody: `{"accounts":[]}${' '.repeat(60_000)}` });
      assertBusy(declared, 'accounts');

      // Chunked, so no length to go by: refused as soon as what it sent no longer fits, without
      // waiting for the end of its body.
      const chunked = openUpload({ origin: sandbox.authUrl, ca: sandbox.ca, path: accounts(), token: demo.token });
      try {
        await chunked.write(Buffer.alloc(MAX_BUFFERED - MAX_BODY + 10_000, 0x20));
        const answer = await within(chunked.answer, 10_000, 'no answer while the chunked body was unfinished');
        assert.equal(answer.status, 503);
        assert.equal(answer.headers['retry-after'], '1');
        assert.equal(answer.headers.connection, 'close');
        assert.deepEqual(answer.body, { error: 'Service unavailable. Please try again later.' });
      } finally {
        chunked.destroy();
      }
      assert.equal(sandbox.stats().bufferedBytes, MAX_BODY, 'the refused body gave its bytes back');

      // A small body still fits, and A finishes normally.
      const small = await fresh('POST', accounts(), { token: demo.token, body: { accounts: [] } });
      assert.equal(small.status, 200);
      a.end(Buffer.alloc(MAX_BODY - start.length, 0x20));
      const done = await within(a.answer, 10_000, 'no answer to the held upload');
      assert.equal(done.status, 200, done.text);
    } finally {
      a.destroy();
    }
    assert.equal(sandbox.stats().bufferedBytes, 0, 'every reservation is given back');
    const again = await fresh('POST', accounts(), { token: demo.token, rawBody: `{"accounts":[]}${' '.repeat(60_000)}` });
    assert.equal(again.status, 200);
  });

  it('lets the unauthenticated endpoints hold at most 64 KiB each', async () => {
    const { email } = sandbox.credentials('demo');
    const res = await fresh('POST', '/admin/auth/demo/login', { body: { email, password: 'x'.repeat(70_000) } });
    assert.equal(res.status, 413);
    assert.deepEqual(res.body, { error: 'Request body is larger than the limit of 65536 bytes.' });
  });
});

describe('options', () => {
  it('default to 256 connections and 40 MiB, never less than one body, and refuse nonsense', () => {
    const o = resolveOptions();
    assert.deepEqual([o.maxConnections, o.maxBufferedBytes], [256, 40 * 1024 * 1024]);
    assert.equal(resolveOptions({ maxBodyBytes: 64 * 1024 * 1024 }).maxBufferedBytes, 64 * 1024 * 1024);
    assert.throws(() => resolveOptions({ maxConnections: 0 }), /maxConnections must be an integer from 1/);
    assert.throws(() => resolveOptions({ maxBufferedBytes: 1000 }), /maxBufferedBytes must be an integer from 10485760 \(the largest request body\)/);
    assert.throws(() => resolveOptions({ maxBodyBytes: 2048, maxBufferedBytes: 2047 }), /maxBufferedBytes/);
  });

  it('come from --max-connections and --max-buffered-bytes', () => {
    assert.deepEqual(parseSandboxArgs(['--max-connections', '10', '--max-buffered-bytes', '20000000']), {
      maxConnections: 10, maxBufferedBytes: 20_000_000,
    });
    assert.throws(() => parseSandboxArgs(['--max-connections', '0']), /^UsageError: --max-connections must be an integer from 1 to 100000, got 0$/);
    assert.throws(() => parseSandboxArgs(['--max-buffered-bytes', 'x']), /--max-buffered-bytes/);
  });
});
