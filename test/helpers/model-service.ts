// A model of the export service for property tests: login and token refresh, and keyset pages
// of one dataset over rows a test generates, answered through a MemoryDispatcher to the real
// client. Any request can be answered with a scheduled fault instead (500, 503, 504, a reset, or
// a 401 that makes the client renew its token), so a test can replay any sequence of failures.
import { MemoryDispatcher, type MemoryAnswer, type MemoryRequest } from './memory-dispatcher.ts';

export type Fault = 'ok' | 500 | 503 | 504 | 401 | 'reset';

export interface ModelRow {
  /** Unique and hidden from the client except through `amount`: the keyset tie-break. */
  uid: number;
  /** Milliseconds of the cursor field. */
  t: number;
  publicId: string;
  /** False for another tenant's candidate row: scanned by a via read, never returned. */
  own: boolean;
}

export interface ModelOptions {
  section: string;
  dataset: string;
  cursorField: string;
  pathKind: 'direct' | 'via';
  rows: ModelRow[];
  /** Answers in order, one per request (logins are never refused with a 401); then 'ok'. */
  faults: readonly Fault[];
}

export const MODEL_AUTH_URL = 'https://model.test';
export const MODEL_LOGIN = { lender: 'acme', email: 'ops@acme.test', password: 'model-password-1' };
const LENDER_PUBLIC_ID = 'LP-MODEL';

type Key = [number, number];

function compareKeys(a: Key, b: Key): number {
  return a[0] - b[0] || a[1] - b[1];
}

function encodeCursor(key: Key): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

function decodeCursor(cursor: string): Key {
  return JSON.parse(Buffer.from(cursor, 'base64url').toString()) as Key;
}

export class ModelService {
  readonly dispatcher = new MemoryDispatcher((req) => this.#answer(req));
  /** Requests answered so far (fault schedule position), and export page requests among them. */
  requests = 0;
  pages = 0;
  readonly #opts: ModelOptions;
  #rows: ModelRow[];
  #faults: readonly Fault[];
  readonly #tokens = new Set<string>();
  #issued = 0;

  constructor(opts: ModelOptions) {
    this.#opts = opts;
    this.#rows = [...opts.rows];
    this.#faults = opts.faults;
  }

  /** Rows written after a load: what the next incremental load must deliver. */
  add(rows: readonly ModelRow[]): void {
    this.#rows.push(...rows);
  }

  /** Starts the fault schedule again from its first answer (for each resumed run). */
  replayFaults(faults: readonly Fault[] = this.#opts.faults): void {
    this.#faults = faults;
    this.requests = 0;
  }

  /** What a plain walk of the whole dataset returns, in delivery order. */
  reference(sort: 'asc' | 'desc', rows: readonly ModelRow[] = this.#rows): string[] {
    const own = rows.filter((r) => r.own).sort((a, b) => compareKeys([a.t, a.uid], [b.t, b.uid]));
    if (sort === 'desc') own.reverse();
    return own.map((r) => String(r.uid));
  }

  row(r: ModelRow): Record<string, unknown> {
    return { public_id: r.publicId, [this.#opts.cursorField]: new Date(r.t).toISOString(), amount: String(r.uid) };
  }

  #answer(req: MemoryRequest): MemoryAnswer {
    const url = new URL(req.path, MODEL_AUTH_URL);
    const login = url.pathname === `/admin/auth/${MODEL_LOGIN.lender}/login`;
    const fault = this.#faults[this.requests++] ?? 'ok';
    if (fault === 'reset') return 'reset';
    if (fault === 500 || fault === 503 || fault === 504) return { status: fault, body: { error: `injected ${fault}` } };
    if (fault === 401 && !login) return { status: 401, body: { error: 'Token expired.' } };
    if (login) return this.#login(req);
    if (url.pathname === `/admin/auth/${MODEL_LOGIN.lender}/refresh-token`) return this.#refresh(req);
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined || !this.#tokens.has(token)) return { status: 401, body: { error: 'Invalid token.' } };
    const path = `/admin/v3/lenders/${LENDER_PUBLIC_ID}/exports/${this.#opts.section}/${this.#opts.dataset}`;
    if (req.method !== 'GET' || url.pathname !== path) return { status: 404, body: { error: `No route ${url.pathname}.` } };
    return this.#page(url.searchParams);
  }

  #issue(): string {
    const token = `tok-${++this.#issued}`;
    this.#tokens.add(token);
    return token;
  }

  #login(req: MemoryRequest): MemoryAnswer {
    const body = JSON.parse(req.body ?? '{}') as { email?: string; password?: string };
    if (body.email !== MODEL_LOGIN.email || body.password !== MODEL_LOGIN.password) return { status: 401, body: { error: 'Invalid credentials.' } };
    return { status: 200, body: { token: this.#issue(), refreshToken: 'refresh-1', lenderPublicId: LENDER_PUBLIC_ID } };
  }

  #refresh(req: MemoryRequest): MemoryAnswer {
    const body = JSON.parse(req.body ?? '{}') as { refreshToken?: string };
    if (body.refreshToken !== 'refresh-1') return { status: 401, body: { error: 'Invalid refresh token.' } };
    return { status: 200, body: { token: this.#issue() } };
  }

  /** Keyset page: `limit` candidates after the cursor in (t, uid) order; a via read returns only
   * the tenant's among them, so its pages can be short or empty while the cursor goes on. */
  #page(q: URLSearchParams): MemoryAnswer {
    this.pages += 1;
    const since = q.has('since') ? Date.parse(q.get('since')!) : -Infinity;
    const until = q.has('until') ? Date.parse(q.get('until')!) : Infinity;
    const sort = q.get('sort') === 'desc' ? 'desc' : 'asc';
    const limit = Number(q.get('limit') ?? 1000);
    const after = q.has('cursor') ? decodeCursor(q.get('cursor')!) : null;
    const dir = sort === 'asc' ? 1 : -1;
    const via = this.#opts.pathKind === 'via';
    const candidates = this.#rows
      .filter((r) => (via || r.own) && r.t >= since && r.t < until)
      .filter((r) => after === null || dir * compareKeys([r.t, r.uid], after) > 0)
      .sort((a, b) => dir * compareKeys([a.t, a.uid], [b.t, b.uid]));
    const scanned = candidates.slice(0, limit);
    const rows = scanned.filter((r) => r.own).map((r) => this.row(r));
    const last = scanned.at(-1);
    const nextCursor = candidates.length > limit && last !== undefined ? encodeCursor([last.t, last.uid]) : null;
    return {
      status: 200,
      body: {
        code: 200, message: 'OK', errors: [],
        body: {
          section: { code: this.#opts.section, name: 'Section' },
          dataset: { code: this.#opts.dataset, name: 'Dataset' },
          rows,
          pagination: { limit, returned: rows.length, nextCursor },
          meta: {
            schemaVersion: 'v1', cursorField: this.#opts.cursorField, sort,
            since: q.get('since'), until: q.get('until'), tenantPathKind: this.#opts.pathKind, readFrom: 'primary',
          },
        },
      },
    };
  }
}
