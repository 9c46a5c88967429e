// Bodies must be UTF-8: a byte sequence that is not is refused with each endpoint's documented
// 400 for an unreadable body, never decoded to U+FFFD and stored. Valid multi-byte text passes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WHOLE_PARSE_CHARS } from '../../src/sandbox/json-body.ts';
import { startTestSandbox, type Session, type TestSandbox } from '../helpers/sandbox.ts';

let t: TestSandbox;
let demo: Session;
before(async () => {
  t = await startTestSandbox();
  demo = await t.loginAs('demo');
});
after(() => t.close());

const path = (tail: string): string => `/admin/v3/lenders/${demo.lenderPublicId}/${tail}`;
const NOT_UTF8 = {
  code: 400, message: null, body: '', errors: [{ accountId: '', errors: ['Request body must be UTF-8 encoded.'] }],
};

function record(firstName: string, n: number): Record<string, unknown> {
  return {
    status: 1, debtorCompanyId: `UTF8-C-${n}`, accountId: `UTF8-A-${n}`, subAccountId: 'S-1',
    firstName, lastName: 'Rahman', language: 'ar', principal: '100',
    birthDate: '02/05/1988', dateDue: '01/12/2026', phones: [{ number: '+971500000001' }], loanType: 3,
  };
}

/** The JSON of `value` with the bytes of the placeholder string replaced by `bad`. */
function withBytes(value: unknown, bad: Buffer): Buffer {
  const [head, tail] = JSON.stringify(value).split('@@BAD@@') as [string, string];
  return Buffer.concat([Buffer.from(head), bad, Buffer.from(tail)]);
}

async function processed(): Promise<number> {
  await t.sandbox.drain();
  return t.sandbox.stats().accountsProcessed;
}

// A lone continuation byte, a truncated sequence, an overlong '/', an encoded surrogate, 0xFF.
const BAD_SEQUENCES = [[0x80], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff]].map((b) => Buffer.from(b));

describe('request bodies that are not UTF-8', () => {
  it('are answered with the accounts endpoints\' documented 400, and nothing is processed', async () => {
    const before = await processed();
    for (const bad of BAD_SEQUENCES) {
      for (const [tail, body] of [
        ['accounts', { accounts: [record('@@BAD@@', 1)] }],
        ['accounts/update-status', { accounts: [{ status: 5, debtorCompanyId: '@@BAD@@', accountId: 'A-1' }] }],
      ] as const) {
        const res = await t.request('POST', path(tail), { token: demo.token, rawBody: withBytes(body, bad) });
        assert.equal(res.status, 400, `${tail} ${bad.toString('hex')}: ${res.text}`);
        assert.deepEqual(res.body, NOT_UTF8);
      }
    }
    assert.equal(await processed(), before, 'no record of a refused body was applied');
  });

  it('are refused in bodies too large for one JSON.parse as well', async () => {
    const many = Array.from({ length: 9000 }, (_, i) => record(`Name ${i}`, i));
    many.push(record('@@BAD@@', 9000));
    const raw = withBytes({ accounts: many }, Buffer.from([0xc3, 0x28]));
    assert.ok(raw.length > WHOLE_PARSE_CHARS, 'this body takes the sliced parser');
    const before = await processed();
    const res = await t.request('POST', path('accounts'), { token: demo.token, rawBody: raw });
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(res.body, NOT_UTF8);
    assert.equal(await processed(), before);
  });

  it('are answered in the auth endpoints\' own shapes', async () => {
    const { email } = t.sandbox.credentials('demo');
    const login = await t.request('POST', '/admin/auth/demo/login', { rawBody: withBytes({ email, password: '@@BAD@@' }, Buffer.from([0xff])) });
    assert.equal(login.status, 400);
    assert.deepEqual(login.body, { error: 'Request body must be UTF-8 encoded.' });
    const refresh = await t.request('POST', '/admin/auth/demo/refresh-token', {
      rawBody: withBytes({ refreshToken: '@@BAD@@' }, Buffer.from([0xff])),
    });
    assert.equal(refresh.status, 400);
    assert.equal(refresh.body.detail, 'Failed to read request');
  });

  it('lets valid multi-byte UTF-8 through, in small and large bodies', async () => {
    const before = await processed();
    const small = await t.request('POST', path('accounts'), { token: demo.token, body: { accounts: [record('محمد 😀', 9000)] } });
    assert.equal(small.status, 200, small.text);
    const many = Array.from({ length: 8000 }, (_, i) => record(`عائشة ${i} 😀`, 10_000 + i));
    const text = JSON.stringify({ accounts: many });
    assert.ok(text.length > WHOLE_PARSE_CHARS, 'this body takes the sliced parser');
    const raw = Buffer.from(text);
    const large = await t.request('POST', path('accounts'), { token: demo.token, rawBody: raw });
    assert.equal(large.status, 200, large.text);
    assert.equal(await processed(), before + 8001);
  });
});
