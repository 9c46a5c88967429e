// A tiny HTTPS server that logs a client in like the service, then answers the export endpoints
// badly on purpose: truncated JSON, HTML error pages, wrong content types, a 200 of the wrong
// shape, and cursors that never end; or, like a gateway in debug mode, answers with an error that
// echoes what it received (the Authorization header, the login body). Its certificate is made
// at start like the sandbox's and trusted by the client through `ca`, so certificate checks stay on.
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateTls } from '../../src/sandbox/tls.ts';
import { fakeJwt } from './fake-jwt.ts';

export type HostileMode =
  | 'ok' // a well-formed single page of D07 (control)
  | 'truncated-json' // 200, application/json, body cut mid-document
  | 'html-error' // 502 text/html from a "proxy"
  | 'html-200' // 200 text/html (a captive portal, a login page)
  | 'wrong-content-type' // 200 application/octet-stream with binary bytes
  | 'wrong-shape' // 200 JSON envelope whose body lacks rows/pagination
  | 'json-null' // 200 with the JSON literal null
  | 'repeat-cursor' // every page: the same rows and the same non-null nextCursor
  | 'endless-same-rows' // every page: the same rows and a new nextCursor
  | 'endless-empty' // every page: no rows and a new nextCursor
  | 'redirect'; // 307 to `redirectTo` (e.g. a plain-http address), login included

/** The endpoint families, as the echo setting names them. */
export type EchoFamily = 'login' | 'refresh' | 'catalog' | 'export' | 'accounts' | 'status';

export interface EchoSettings {
  /** Families answered with the echo; the others answer as usual. */
  families: readonly EchoFamily[];
  status: number;
  /** A status for some families other than `status` (a 401 on the catalog, then a 403 on refresh). */
  statusOf?: Partial<Record<EchoFamily, number>>;
  /** 'json': the service's error fields (message, error, requestId, errors[]) each quoting the
   * request; 'text': a plain-text page quoting it. */
  format: 'json' | 'text';
  /** Echo this many requests, then answer as usual. Default: every one. */
  times?: number;
}

export interface HostileServer {
  readonly authUrl: string;
  readonly ca: string;
  readonly lenderPublicId: string;
  /** The access and refresh tokens every login hands out (JWT-shaped). */
  readonly token: string;
  readonly refreshToken: string;
  /** When set, requests of its families are answered with an error echoing the request. */
  echo: EchoSettings | undefined;
  /** Requests answered with an echo since the last reset(). */
  echoed: number;
  mode: HostileMode;
  /** Export page requests answered since the last reset(). */
  pages: number;
  /** Login requests answered (also HTML for login in mode 'html-error' with loginToo). */
  logins: number;
  /** When true, login is answered with the mode's bad answer as well. */
  loginToo: boolean;
  /** Location of mode 'redirect'. */
  redirectTo: string;
  reset(): void;
  close(): Promise<void>;
}

const ROW = {
  public_id: '0b0c8a4e-7e1a-4c55-9d0e-5d1d2a0f0001', amount: 100, settled_amount: 100, payment_type: 'PAID_TO_LENDER',
  payment_status: 'SUCCESS', is_settled: true, paid_before_submission: false, paid_date: '2025-03-01T10:00:00.000Z',
  failure_reason: null, created_at: '2025-03-01T10:00:00.000Z', updated_at: '2025-03-01T10:00:00.000Z',
};


function page(rows: unknown[], nextCursor: string | null): unknown {
  return {
    code: 200, message: 'success', errors: [],
    body: {
      section: { code: 'S2', name: 'Payments & Settlements' }, dataset: { code: 'D07', name: 'Borrower Payments' },
      rows, pagination: { limit: 1000, returned: rows.length, nextCursor },
      meta: { schemaVersion: 'v1', cursorField: 'updated_at', sort: 'asc', since: null, until: null, tenantPathKind: 'direct', readFrom: 'primary' },
    },
  };
}

const CATALOG = {
  code: 200, message: 'success', errors: [],
  body: { schemaVersion: 'v1', sections: [{ code: 'S2', name: 'Payments & Settlements', datasets: [{ code: 'D07', name: 'Borrower Payments', cursorField: 'updated_at', pageMax: 1000, available: true }] }] },
};

const HTML = '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>';

export async function startHostileServer(): Promise<HostileServer> {
  const tls = await generateTls('127.0.0.1', 'hostile test server');
  const lenderPublicId = randomUUID();
  const token = fakeJwt(lenderPublicId, 'access', 3600);
  const refreshToken = fakeJwt(lenderPublicId, 'refresh', 7200);
  let counter = 0;

  const state = {
    mode: 'ok' as HostileMode, pages: 0, logins: 0, loginToo: false, redirectTo: 'http://127.0.0.1:9/',
    echo: undefined as EchoSettings | undefined, echoed: 0,
  };

  /** Answers with the echo when the settings ask for it; false when the request goes on as usual. */
  const echo = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, family: EchoFamily, received: string): boolean => {
    const settings = state.echo;
    if (settings === undefined || !settings.families.includes(family)) return false;
    if (settings.times !== undefined && state.echoed >= settings.times) return false;
    state.echoed += 1;
    const authorization = req.headers.authorization ?? '(none)';
    const said = `Request refused by gateway: authorization=${authorization} headers=${JSON.stringify(req.headers)} body=${received}`;
    const status = settings.statusOf?.[family] ?? settings.status;
    if (settings.format === 'text') {
      res.writeHead(status, { 'content-type': 'text/plain', 'x-request-id': authorization });
      res.end(said);
      return true;
    }
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': authorization });
    res.end(JSON.stringify({
      success: false, message: said, error: said, requestId: authorization,
      errors: [{ accountId: authorization, errors: [said, received] }],
    }));
    return true;
  };

  const bad = (res: import('node:http').ServerResponse, mode: HostileMode): boolean => {
    switch (mode) {
      case 'truncated-json': {
        const text = JSON.stringify(page([ROW, ROW], 'abc'));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(text.slice(0, Math.floor(text.length / 2)));
        return true;
      }
      case 'html-error':
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end(HTML);
        return true;
      case 'html-200':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(HTML.replace('502 Bad Gateway', 'Sign in'));
        return true;
      case 'wrong-content-type':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]));
        return true;
      case 'wrong-shape':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 200, message: 'success', body: { rows: 'none', pagination: [] }, errors: [] }));
        return true;
      case 'redirect':
        res.writeHead(307, { location: state.redirectTo, 'content-type': 'text/plain' });
        res.end('moved');
        return true;
      case 'json-null':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('null');
        return true;
      default:
        return false;
    }
  };

  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://x');
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const family = familyOf(url.pathname);
      if (family !== undefined && echo(req, res, family, Buffer.concat(chunks).toString('utf8'))) return;
      if (family === 'accounts' || family === 'status') {
        json(202, { code: 202, message: 'accepted', body: 'accepted', errors: [] });
        return;
      }
      if (url.pathname.endsWith('/login') || url.pathname.endsWith('/refresh-token')) {
        state.logins += 1;
        if (state.loginToo && bad(res, state.mode)) return;
        json(200, url.pathname.endsWith('/login') ? { token, refreshToken, lenderPublicId } : { token });
        return;
      }
      if (url.pathname.endsWith('/exports/catalog')) {
        json(200, CATALOG);
        return;
      }
      if (url.pathname.includes('/exports/')) {
        state.pages += 1;
        if (bad(res, state.mode)) return;
        switch (state.mode) {
          case 'repeat-cursor':
            json(200, page([ROW], 'c2FtZS1jdXJzb3I'));
            return;
          case 'endless-same-rows':
            json(200, page([ROW], `n${++counter}`));
            return;
          case 'endless-empty':
            json(200, page([], `e${++counter}`));
            return;
          default:
            json(200, page([ROW], null));
            return;
        }
      }
      json(404, { success: false, message: 'Unknown dataset', requestId: randomUUID() });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    authUrl: `https://127.0.0.1:${port}`,
    ca: tls.cert,
    lenderPublicId,
    token,
    refreshToken,
    get echo() { return state.echo; },
    set echo(e: EchoSettings | undefined) { state.echo = e; },
    get echoed() { return state.echoed; },
    set echoed(n: number) { state.echoed = n; },
    get mode() { return state.mode; },
    set mode(m: HostileMode) { state.mode = m; },
    get pages() { return state.pages; },
    set pages(n: number) { state.pages = n; },
    get logins() { return state.logins; },
    set logins(n: number) { state.logins = n; },
    get loginToo() { return state.loginToo; },
    set loginToo(v: boolean) { state.loginToo = v; },
    get redirectTo() { return state.redirectTo; },
    set redirectTo(v: string) { state.redirectTo = v; },
    reset() {
      state.pages = 0;
      state.logins = 0;
      state.echoed = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function familyOf(pathname: string): EchoFamily | undefined {
  if (pathname.endsWith('/login')) return 'login';
  if (pathname.endsWith('/refresh-token')) return 'refresh';
  if (pathname.endsWith('/exports/catalog')) return 'catalog';
  if (pathname.includes('/exports/')) return 'export';
  if (pathname.endsWith('/accounts/update-status')) return 'status';
  if (pathname.endsWith('/accounts')) return 'accounts';
  return undefined;
}

export const HOSTILE_ROW = ROW;
