// An HTTPS proxy in front of a sandbox that, once armed, holds export page requests after a number
// of rows has been answered, until released. A test can so stop a `lender sync` child in the
// middle of its load, with rows on disk and more to come, at a point that does not depend on
// timing. It has its own certificate (made at start like the sandbox's), trusted through LENDER_CA_FILE.
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateTls } from '../../src/sandbox/tls.ts';
import { Agent, request } from 'undici';

export interface Gate {
  /** Resolves once a page request is being held. */
  readonly holding: Promise<void>;
  /** Lets held and later requests through. */
  release(): void;
}

export interface GateProxy {
  readonly authUrl: string;
  /** PEM of the proxy's certificate. */
  readonly ca: string;
  /** From now on, holds page requests once `rows` more rows were answered. */
  arm(rows: number): Gate;
  close(): Promise<void>;
}

// Hop-by-hop headers are the proxy's own business; accept-encoding is dropped so pages can be counted.
const DROPPED = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'accept-encoding', 'content-length']);

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !DROPPED.has(name)) out[name] = value;
  return out;
}

export async function startGateProxy(upstream: { authUrl: string; ca: string }): Promise<GateProxy> {
  const tls = await generateTls('127.0.0.1', 'gate proxy');
  const agent = new Agent({ connect: { ca: upstream.ca } });
  /** Rows still let through before the armed gate holds; Infinity when not armed. */
  let left = Infinity;
  let gate: Promise<void> = Promise.resolve();
  let open = (): void => undefined;
  let holdingNow = (): void => undefined;

  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const path = req.url ?? '/';
      const isPage = req.method === 'GET' && path.includes('/exports/') && !/\/exports\/catalog(?:\?|$)/.test(path);
      if (isPage && left <= 0) {
        holdingNow();
        await gate;
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const answer = await request(`${upstream.authUrl}${path}`, {
        method: req.method as 'GET', headers: forwardable(req.headers), body, dispatcher: agent,
      });
      const text = Buffer.from(await answer.body.arrayBuffer());
      if (isPage && answer.statusCode === 200) {
        left -= (JSON.parse(text.toString('utf8')) as { body: { rows: unknown[] } }).body.rows.length;
      }
      res.writeHead(answer.statusCode, forwardable(answer.headers as IncomingHttpHeaders));
      res.end(text);
    })().catch(() => {
      // The client went away while held (it was stopped), or the sandbox did: no answer to give.
      res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    authUrl: `https://127.0.0.1:${port}`,
    ca: tls.cert,
    arm(rows) {
      left = rows;
      gate = new Promise<void>((resolve) => (open = resolve));
      const holding = new Promise<void>((resolve) => (holdingNow = resolve));
      return {
        holding,
        release: () => {
          left = Infinity;
          open();
        },
      };
    },
    async close() {
      open();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.close();
    },
  };
}
