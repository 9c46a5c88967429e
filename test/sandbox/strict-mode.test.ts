// Strict mode (on in the project's tests) over real HTTPS: everything the real service may refuse
// is refused in the endpoint's documented error shape; the same requests on a default sandbox
// show the leniency strict mode removes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type JsonResponse, type Session, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const OK = { code: 200, message: 'success', body: 'Processing started successfully', errors: [] };

/** A record with only the fields the prose reference requires. */
const proseRecord = (n: number): Record<string, unknown> => ({
  status: 1, debtorCompanyId: `STRICT-C-${n}`, firstName: 'Huda', lastName: 'Saleh', language: 'ar',
  accountId: `STRICT-A-${n}`, subAccountId: 'S-1', principal: '250',
});
/** The same with the machine-readable schema's required fields too: what passes either reading. */
const fullRecord = (n: number): Record<string, unknown> => ({
  ...proseRecord(n), birthDate: '09/09/1979', dateDue: '01/02/2027', phones: [{ number: '+966500000002' }], loanType: 4,
});

function assertExportError(res: JsonResponse, status: number, message: RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['message', 'requestId', 'success']);
  assert.equal(res.body.success, false);
  assert.match(res.body.message, message);
}

let strict: TestSandbox;
let lenient: TestSandbox;
let s: Session;
let l: Session;

before(async () => {
  [strict, lenient] = await Promise.all([startTestSandbox({ scale: 60 }), startTestSandbox({ scale: 60, strict: false })]);
  [s, l] = await Promise.all([strict.loginAs('demo'), lenient.loginAs('demo')]);
});
after(() => Promise.all([strict.close(), lenient.close()]));

const page = (t: TestSandbox, session: Session, query: string): Promise<JsonResponse> =>
  t.request('GET', `/admin/v3/lenders/${session.lenderPublicId}/exports/S2/D07?${query}`, { token: session.token });
const push = (t: TestSandbox, session: Session, accounts: unknown[], headers?: Record<string, string>): Promise<JsonResponse> =>
  t.request('POST', `/admin/v3/lenders/${session.lenderPublicId}/accounts`, {
    token: session.token, rawBody: JSON.stringify({ accounts }), ...(headers && { headers }),
  });

describe('strict request bodies', () => {
  it('a body not sent as application/json gets each endpoint its documented 400', async () => {
    const plain = { 'content-type': 'text/plain' };
    const accounts = await push(strict, s, [fullRecord(1)], plain);
    assert.equal(accounts.status, 400);
    assert.deepEqual(accounts.body, {
      code: 400, message: null, body: '',
      errors: [{ accountId: '', errors: ['Request body must be sent as Content-Type: application/json.'] }],
    });
    const { email, password } = strict.sandbox.credentials('demo');
    const login = await strict.request('POST', '/admin/auth/demo/login', { rawBody: JSON.stringify({ email, password }), headers: plain });
    assert.equal(login.status, 400);
    assert.deepEqual(Object.keys(login.body), ['error']);
    const refresh = await strict.request('POST', '/admin/auth/demo/refresh-token', {
      rawBody: JSON.stringify({ refreshToken: s.refreshToken }), headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(refresh.status, 400);
    assert.equal(refresh.body.title, 'Bad Request');
    assert.equal(refresh.body.detail, 'Failed to read request');
    // With a charset parameter it is still JSON.
    const charset = await push(strict, s, [fullRecord(2)], { 'content-type': 'application/json; charset=utf-8' });
    assert.deepEqual(charset.body, OK);
    // The default sandbox reads the JSON whatever the header says.
    assert.deepEqual((await push(lenient, l, [fullRecord(3)], plain)).body, OK);
  });

  it('an account needs the union of both documented required lists', async () => {
    const res = await push(strict, s, [proseRecord(4)]);
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.errors, [{
      accountId: 'STRICT-A-4',
      errors: ['birthDate is required', 'phones is required', 'dateDue is required', 'loanType is required'],
    }]);
    assert.deepEqual((await push(strict, s, [fullRecord(4)])).body, OK);
    assert.deepEqual((await push(strict, s, [{ ...fullRecord(5), phones: [] }])).body, OK, 'an empty phones list is present');
    assert.deepEqual((await push(lenient, l, [proseRecord(4)])).body, OK);
  });
});

describe('strict export queries', () => {
  it('the catalog takes no query parameters: any is a 500 naming it; the default sandbox ignores them', async () => {
    const catalog = (t: TestSandbox, session: Session, query: string): Promise<JsonResponse> =>
      t.request('GET', `/admin/v3/lenders/${session.lenderPublicId}/exports/catalog${query}`, { token: session.token });
    assert.equal((await catalog(strict, s, '')).status, 200);
    for (const query of ['?foo=1', '?limit=10', '?__proto__=x']) {
      assertExportError(await catalog(strict, s, query), 500, new RegExp(`Unknown query parameter '${query.slice(1).split('=')[0]}'; the catalog takes none`));
      assert.equal((await catalog(lenient, l, query)).status, 200, query);
    }
  });

  it('a query value outside the documented ones is a 500 naming the parameter', async () => {
    const cases: [string, RegExp][] = [
      ['limit=abc', /limit/], ['limit=10.5', /limit/], ['limit=', /limit/],
      ['sort=foo', /sort/], ['sort=ASC', /sort/],
      ['includeTotal=yes', /includeTotal/], ['includeTotal=1', /includeTotal/],
      // '+' unencoded in a query string means a space.
      ['since=2026-01-01T04:00:00+04:00', /since.*%2B/], ['until=2026-02-01T00:00:00+00:00', /until/],
      ['foo=1', /Unknown query parameter 'foo'/], ['limit=1&limit=2', /more than once/], ['since=', /since/],
      // Names Object.prototype has are unknown parameters too.
      ['toString=1', /Unknown query parameter 'toString'/], ['constructor=1', /Unknown query parameter 'constructor'/],
      ['__proto__=1', /Unknown query parameter '__proto__'/], ['hasOwnProperty=x', /Unknown query parameter 'hasOwnProperty'/],
    ];
    for (const [query, message] of cases) {
      assertExportError(await page(strict, s, query), 500, message);
      // The default sandbox reads each one somehow (a default, a repaired '+', the first value).
      assert.equal((await page(lenient, l, query)).status, 200, `default sandbox: ${query}`);
    }
  });

  it('the documented forms pass: integers clamped, asc/desc, true/false, %2B-encoded offsets', async () => {
    for (const query of ['limit=-3', 'limit=5000', 'sort=desc', 'includeTotal=false', 'includeTotal=true', 'since=2026-01-01T04:00:00%2B04:00&until=2026-02-01']) {
      const res = await page(strict, s, query);
      assert.equal(res.status, 200, `${query}: ${res.text}`);
    }
    const encoded = await page(strict, s, 'since=2026-01-01T04:00:00%2B04:00');
    assert.equal(encoded.body.body.meta.since, '2026-01-01T00:00:00.000Z');
  });

  it('a cursor with characters appended is malformed; the cursor as issued works', async () => {
    const first = await page(strict, s, 'limit=5');
    const cursor: string = first.body.body.pagination.nextCursor;
    assert.equal((await page(strict, s, `limit=5&cursor=${cursor}`)).status, 200);
    for (const extra of ['A', 'AA', 'x']) {
      assertExportError(await page(strict, s, `limit=5&cursor=${cursor}${extra}`), 500, /Malformed cursor/);
    }
  });
});
