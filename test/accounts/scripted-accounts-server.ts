// A small HTTPS server that logs a client in like the service and answers the accounts endpoint
// from a script the test sets: what the sandbox never does, such as a 400 naming an account that
// is not in the request. Every request body it receives is kept. Its certificate is made
// at start like the sandbox's and trusted through `ca`, so certificate checks stay on.
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateTls } from '../../src/sandbox/tls.ts';
import { fakeJwt } from '../helpers/fake-jwt.ts';

export interface AccountsAnswer {
  status: number;
  body: unknown;
}

export const ACCEPTED_ANSWER: AccountsAnswer = {
  status: 200,
  body: { code: 200, message: 'success', body: 'Processing started successfully', errors: [] },
};

/** The service's 400 of the accounts endpoints, naming these accounts. */
export function refusal(errors: { accountId: string; errors: string[] }[]): AccountsAnswer {
  return { status: 400, body: { code: 400, message: null, body: '', errors } };
}

export interface ScriptedAccountsServer {
  readonly authUrl: string;
  readonly ca: string;
  readonly lender: string;
  readonly email: string;
  readonly password: string;
  /** What LenderClient.login takes to log in here. */
  credentials(): { authUrl: string; lender: string; email: string; password: string; ca: string };
  /** Answers to the next account requests, in order; once used up, each request is accepted. */
  readonly script: AccountsAnswer[];
  /** The `accounts` array of each account request received. */
  readonly received: Record<string, unknown>[][];
  /** Answers to GET requests, by path after the lender's (e.g. '/exports/catalog'). */
  readonly gets: Map<string, AccountsAnswer>;
  close(): Promise<void>;
}


export async function startScriptedAccountsServer(): Promise<ScriptedAccountsServer> {
  const tls = await generateTls('127.0.0.1', 'scripted accounts server');
  const lenderPublicId = randomUUID();
  const jwt = (typ: string, ttl: number) => fakeJwt(lenderPublicId, typ, ttl);
  const script: AccountsAnswer[] = [];
  const received: Record<string, unknown>[][] = [];
  const gets = new Map<string, AccountsAnswer>();

  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      const json = ({ status, body }: AccountsAnswer) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (path.endsWith('/login')) return json({ status: 200, body: { token: jwt('access', 3600), refreshToken: jwt('refresh', 7200), lenderPublicId } });
      if (req.method === 'POST' && path === `/admin/v3/lenders/${lenderPublicId}/accounts`) {
        received.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { accounts: Record<string, unknown>[] }).accounts);
        return json(script.shift() ?? ACCEPTED_ANSWER);
      }
      const lenderPath = `/admin/v3/lenders/${lenderPublicId}`;
      const answer = req.method === 'GET' && path.startsWith(lenderPath) ? gets.get(path.slice(lenderPath.length)) : undefined;
      if (answer !== undefined) return json(answer);
      json({ status: 404, body: { error: 'Not found' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const login = { authUrl: `https://127.0.0.1:${port}`, lender: 'scripted', email: 'ops@example.com', password: 'scripted-password', ca: tls.cert };
  return {
    ...login,
    script,
    received,
    gets,
    credentials: () => ({ ...login }),
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
