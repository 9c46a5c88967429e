// Transport failure modes against tiny local servers: plain HTTP refused before any socket,
// bodies that are not what the service documents, resets, timeouts and aborts.
import assert from 'node:assert/strict';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { LenderClient } from '../../src/client/client.ts';
import {
  AbortError, CertificateError, InsecureUrlError, NetworkError, ProtocolError, RequestTimeoutError, ServerError,
} from '../../src/core/errors.ts';
import { Transport } from '../../src/core/transport.ts';
import { generateTls } from '../../src/sandbox/tls.ts';

const session = { token: 'not-a-jwt', refreshToken: 'not-a-refresh-token', lenderPublicId: 'lender-1' };
const noRetry = { attempts: 1 };

describe('plain HTTP is refused before any I/O', () => {
  let server: NetServer;
  let port: number;
  let connections = 0;
  before(async () => {
    server = createNetServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('login, resume and the transport all refuse http:// and the listener sees no connection', async () => {
    const authUrl = `http://127.0.0.1:${port}`;
    await assert.rejects(LenderClient.login({ authUrl, lender: 'demo', email: 'e', password: 'p' }), (error: unknown) => {
      assert.ok(error instanceof InsecureUrlError);
      assert.match(error.message, /requires HTTPS/);
      return true;
    });
    assert.throws(() => LenderClient.resume({ authUrl, lender: 'demo', session }), InsecureUrlError);
    const transport = new Transport();
    await assert.rejects(transport.request({ method: 'GET', url: `${authUrl}/x` }), InsecureUrlError);
    await transport.close();
    // The listener is real: prove it would have counted a connection.
    await new Promise<void>((resolve) => setTimeout(resolve, 20));
    assert.equal(connections, 0);
    const probe = await import('node:net').then((net) => net.connect(port, '127.0.0.1'));
    await new Promise<void>((resolve) => probe.once('close', () => resolve()).once('error', () => resolve()));
    assert.equal(connections, 1);
  });
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe('responses that break the protocol', () => {
  let server: HttpsServer;
  let ca: string;
  let authUrl: string;
  let handler: Handler = (_req, res) => res.end();
  const clients: LenderClient[] = [];

  before(async () => {
    const tls = await generateTls('127.0.0.1');
    ca = tls.cert;
    server = createHttpsServer({ key: tls.key, cert: tls.cert }, (req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    authUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function client(options: { timeoutMs?: number; withCa?: boolean } = {}): LenderClient {
    const c = LenderClient.resume({
      authUrl, lender: 'demo', session, retry: noRetry, proactiveRefresh: false,
      ...(options.withCa === false ? {} : { ca }),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
    clients.push(c);
    return c;
  }

  it('an HTML page with status 200 → ProtocolError naming the status', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE html><html><body>Maintenance</body></html>');
    };
    await assert.rejects(client().catalog(), (error: unknown) => {
      assert.ok(error instanceof ProtocolError, String(error));
      assert.match(error.message, /status 200/);
      assert.match(error.message, /not JSON/);
      assert.match(error.message, /DOCTYPE/);
      return true;
    });
  });

  it('a complete response whose JSON is cut short → ProtocolError', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"code":200,"message":"ok","body":{"schemaVersion":"v1","sect');
    };
    await assert.rejects(client().catalog(), ProtocolError);
  });

  it('valid JSON of the wrong shape → ProtocolError, not a TypeError', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 200, message: 'ok', body: { rows: 'nope' }, errors: [] }));
    };
    await assert.rejects(client().fetchPage('D07', {}), ProtocolError);
    await assert.rejects(client().catalog(), ProtocolError);
  });

  it('an HTML 404 → ProtocolError; an HTML 502 → ServerError', async () => {
    handler = (req, res) => {
      res.writeHead(req.url?.includes('D07') ? 404 : 502, { 'content-type': 'text/html' });
      res.end('<html><body>nginx</body></html>');
    };
    await assert.rejects(client().fetchPage('D07', {}), ProtocolError);
    await assert.rejects(client().catalog(), ServerError);
  });

  it('a connection reset in the middle of the body → NetworkError', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
      res.write('{"code":200,"message":"ok","body":{', () => setImmediate(() => res.socket?.destroy()));
    };
    await assert.rejects(client().catalog(), (error: unknown) => {
      assert.ok(error instanceof NetworkError, String(error));
      assert.ok(!(error instanceof RequestTimeoutError));
      return true;
    });
  });

  it('no response within the timeout → RequestTimeoutError', async () => {
    handler = () => undefined;
    await assert.rejects(client({ timeoutMs: 150 }).catalog(), RequestTimeoutError);
  });

  it('a body that stalls midway also hits the timeout', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
      res.write('{"code":200,');
    };
    await assert.rejects(client({ timeoutMs: 150 }).catalog(), RequestTimeoutError);
  });

  it('an abort rejects with an AbortError carrying the reason, and is not retried', async () => {
    let requests = 0;
    const controller = new AbortController();
    // Aborted once the server holds the request, and never answered: only the abort can end it.
    handler = () => {
      requests += 1;
      controller.abort(new Error('user stopped'));
    };
    const c = LenderClient.resume({ authUrl, lender: 'demo', session, ca, proactiveRefresh: false });
    clients.push(c);
    const pending = c.catalog({ signal: controller.signal });
    await assert.rejects(pending, (error: unknown) => {
      assert.ok(error instanceof AbortError);
      assert.equal((error.cause as Error).message, 'user stopped');
      return true;
    });
    assert.equal(requests, 1);
    assert.equal(c.stats.retries, 0);
    await assert.rejects(c.catalog({ signal: AbortSignal.abort() }), AbortError);
    assert.equal(requests, 1);
  });

  it('an abort or the timeout ends a request still waiting for its TLS handshake, not undici\'s connect timeout later', async () => {
    // A host that accepts the connection and never answers the handshake: undici alone keeps the
    // request until its own connect timeout (ten seconds) whatever the signal says.
    const sockets: { ended: boolean; closed: Promise<unknown> }[] = [];
    const silent = createNetServer((socket) => {
      const seen = { ended: false, closed: once(socket, 'close') };
      sockets.push(seen);
      socket.on('close', () => (seen.ended = true));
      socket.on('error', () => undefined);
      // Read (and drop) the client's hello, so that its end is seen.
      socket.resume();
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const url = `https://127.0.0.1:${(silent.address() as AddressInfo).port}/x`;
    // What settles first: the promise, or undici's connect timeout (ten seconds) less a margin.
    const beforeUndiciGivesUp = (promise: Promise<unknown>) =>
      Promise.race([promise.then(() => 'settled', (error: unknown) => error), new Promise((r) => setTimeout(r, 8000, 'still waiting'))]);
    const transport = new Transport({ timeoutMs: 60_000 });
    try {
      const controller = new AbortController();
      const pending = transport.request({ method: 'GET', url, signal: controller.signal });
      while (sockets.length === 0) await new Promise((r) => setTimeout(r, 10));
      controller.abort(new Error('user stopped'));
      assert.ok(await beforeUndiciGivesUp(pending) instanceof AbortError, 'the abort rejects at once');
      assert.equal(sockets[0]!.ended, false, 'rejected while the handshake was still pending');
      // Closing drops that connection: left to undici, it would hold the process for ten seconds.
      await transport.close();
      assert.equal(await beforeUndiciGivesUp(sockets[0]!.closed), 'settled', 'the connection in its handshake is closed by close()');
      const timed = new Transport({ timeoutMs: 200 });
      try {
        assert.ok(await beforeUndiciGivesUp(timed.request({ method: 'GET', url })) instanceof RequestTimeoutError, 'the timeout too');
      } finally {
        await timed.close().catch(() => undefined);
      }
    } finally {
      await transport.close().catch(() => undefined);
      silent.close();
    }
  });

  it('close() right after one request is aborted still lets another request in flight complete', async () => {
    const tls = await generateTls('127.0.0.1');
    const slow = createHttpsServer({ key: tls.key, cert: tls.cert }, (_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 300);
    });
    slow.listen(0, '127.0.0.1');
    await once(slow, 'listening');
    const url = `https://127.0.0.1:${(slow.address() as AddressInfo).port}/x`;
    const transport = new Transport({ ca: tls.cert, timeoutMs: 10_000 });
    try {
      const wanted = transport.request({ method: 'GET', url });
      const controller = new AbortController();
      const dropped = transport.request({ method: 'GET', url, signal: controller.signal });
      await new Promise((r) => setTimeout(r, 100));
      // close() called at once, while undici has not yet settled the aborted request.
      controller.abort(new Error('stop'));
      const closing = transport.close();
      await assert.rejects(dropped, AbortError);
      assert.equal((await wanted).status, 200);
      await closing;
    } finally {
      slow.closeAllConnections();
      slow.close();
    }
  });

  it('a self-signed server is refused without its CA (CertificateError) and accepted with it', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 200, message: 'ok', body: { schemaVersion: 'v1', sections: [] }, errors: [] }));
    };
    await assert.rejects(client({ withCa: false }).catalog(), (error: unknown) => {
      assert.ok(error instanceof CertificateError, String(error));
      assert.equal(error.retryable, false);
      assert.match(error.message, /--ca-file|LENDER_CA_FILE/);
      return true;
    });
    assert.deepEqual(await client().catalog(), { schemaVersion: 'v1', sections: [] });
  });

  it('sends a User-Agent naming the library and Node, and JSON bodies', async () => {
    let seen: { ua?: string; type?: string; body?: string } = {};
    handler = (req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen = { ua: req.headers['user-agent'], type: req.headers['content-type'], body };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 200, message: 'success', body: 'Processing started successfully', errors: [] }));
      });
    };
    const accepted = await client().upsertAccounts([{ accountId: 'A-1' }]);
    assert.equal(accepted.code, 200);
    assert.match(seen.ua ?? '', /^lender-streams\/\d+\.\d+\.\d+ node\/\d+/);
    assert.equal(seen.type, 'application/json');
    assert.deepEqual(JSON.parse(seen.body ?? ''), { accounts: [{ accountId: 'A-1' }] });
  });
});

describe('an extra CA is trusted besides the defaults, not instead of them', () => {
  it("a client's extra CA is its own: Node's default trust store does not gain it", async () => {
    const { startSandbox } = await import('../../src/sandbox/index.ts');
    const a = await startSandbox({ scale: 10 });
    try {
      const client = await LenderClient.login({ ...a.credentials('demo'), ca: a.ca, retry: { attempts: 1 } });
      try {
        assert.equal((await client.catalog()).schemaVersion, 'v1');
        // A connection with Node's defaults, made after the client's: still refused.
        const { hostname, port } = new URL(a.credentials('demo').authUrl);
        const refused = await new Promise<Error | undefined>((resolve) => {
          const socket = connect({ host: hostname, port: Number(port) }, () => {
            socket.end();
            resolve(undefined);
          });
          socket.once('error', resolve);
        });
        assert.ok(refused !== undefined, 'a default TLS connection trusted the client\'s CA');
        assert.match(String((refused as NodeJS.ErrnoException).code), /SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
      } finally {
        await client.close();
      }
    } finally {
      await a.close();
    }
  });

  it("with NODE_EXTRA_CA_CERTS trusting sandbox B, a client given sandbox A's CA still reaches B", async () => {
    // Node reads NODE_EXTRA_CA_CERTS into its default trust store at start, so the check runs in a
    // child process. Node's own `ca` option drops that store; an extra CA must not.
    const { startSandbox } = await import('../../src/sandbox/index.ts');
    const a = await startSandbox({ scale: 10 });
    const b = await startSandbox({ scale: 10 });
    try {
      const script = `
        const { LenderClient } = await import(${JSON.stringify(new URL('../../src/client/client.ts', import.meta.url).href)});
        const creds = JSON.parse(process.env.CREDS);
        const client = await LenderClient.login({ ...creds, retry: { attempts: 1 } });
        const catalog = await client.catalog();
        await client.close();
        process.stdout.write(catalog.schemaVersion);
      `;
      // Asynchronous: the sandboxes answer from this process's event loop.
      const run = (extraCaFile: string | undefined, ca: string) => new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script],
          { encoding: 'utf8', env: { ...process.env, NODE_EXTRA_CA_CERTS: extraCaFile ?? '', CREDS: JSON.stringify({ ...b.credentials('demo'), ca }) } },
          (error, stdout, stderr) => resolve({ status: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
        );
      });
      const trusted = await run(b.caFile, a.ca);
      assert.equal(trusted.status, 0, trusted.stderr);
      assert.equal(trusted.stdout, 'v1');
      // Certificate checks are still on: without B in the default store, A's CA does not vouch for B.
      const untrusted = await run(undefined, a.ca);
      assert.notEqual(untrusted.status, 0);
      assert.match(untrusted.stderr, /CertificateError|could not be verified/);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
