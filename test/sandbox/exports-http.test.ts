// The export endpoints over real HTTPS: catalog, every error message, query rules, cursors,
// via pages, the 504 budget, totals, masking on served rows and tenant isolation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATASETS } from '../../src/core/catalog.ts';
import { DATA_SPAN } from '../../src/sandbox/contracts.ts';
import { expectedGeneratedRows } from '../../src/sandbox/exports/testing.ts';
import { type JsonResponse, type Session, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const SEED = 42;
const SCALE = 300;
const VIA_BUDGET = 100;
const TOTAL_CAP = 250;

let t: TestSandbox;
let demo: Session;
let other: Session;

before(async () => {
  t = await startTestSandbox({ seed: SEED, scale: SCALE, viaBudget: VIA_BUDGET, totalCap: TOTAL_CAP, available: { D04: true, D12: false } });
  [demo, other] = await Promise.all([t.loginAs('demo'), t.loginAs('other')]);
  await t.sandbox.drain();
});
after(() => t.close());

function get(path: string, session: Session = demo, lenderPublicId = session.lenderPublicId): Promise<JsonResponse> {
  return t.request('GET', `/admin/v3/lenders/${lenderPublicId}/exports/${path}`, { token: session.token });
}

async function ok(path: string, session?: Session): Promise<any> {
  const res = await get(path, session);
  assert.equal(res.status, 200, `${path}: ${res.text}`);
  assert.equal(res.body.code, 200);
  assert.equal(res.body.message, 'success');
  assert.deepEqual(res.body.errors, []);
  return res.body.body;
}

function assertExportError(res: JsonResponse, status: number, message: string | RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['message', 'requestId', 'success']);
  assert.equal(res.body.success, false);
  if (typeof message === 'string') assert.equal(res.body.message, message);
  else assert.match(res.body.message, message);
  assert.ok(typeof res.body.requestId === 'string' && res.body.requestId.length > 0);
}

/** Follows nextCursor to null; returns every row and the page sizes. */
async function walk(path: string, query: string): Promise<{ rows: any[]; sizes: number[]; cursors: (string | null)[] }> {
  const rows: any[] = [];
  const sizes: number[] = [];
  const cursors: (string | null)[] = [];
  let cursor: string | null = null;
  do {
    const body = await ok(`${path}?${query}${cursor === null ? '' : `&cursor=${cursor}`}`);
    rows.push(...body.rows);
    sizes.push(body.pagination.returned);
    assert.equal(body.pagination.returned, body.rows.length);
    cursor = body.pagination.nextCursor;
    cursors.push(cursor);
  } while (cursor !== null);
  return { rows, sizes, cursors };
}

describe('catalog', () => {
  test('lists the 25 documented datasets per section with availability overrides applied', async () => {
    const body = await ok('catalog');
    assert.equal(body.schemaVersion, 'v1');
    assert.deepEqual(body.sections.map((s: any) => [s.code, s.name]), [
      ['S1', 'Customers & Accounts'], ['S2', 'Payments & Settlements'], ['S3', 'Collections Cases'],
      ['S4', 'Communications'], ['S5', 'Reference & Configuration'],
    ]);
    const listed = body.sections.flatMap((s: any) => s.datasets.map((d: any) => ({ section: s.code, ...d })));
    assert.equal(listed.length, 25);
    assert.ok(!listed.some((d: any) => d.code === 'D25'));
    const overrides: Record<string, boolean> = { D04: true, D12: false };
    assert.deepEqual(listed, DATASETS.map((d) => ({
      section: d.section, code: d.code, name: d.name, cursorField: d.cursorField, pageMax: 1000,
      available: overrides[d.code] ?? d.availableAtListing,
    })));
  });
});

describe('errors', () => {
  test('401, 403 and each 404 carry the documented message', async () => {
    assertExportError(await t.request('GET', `/admin/v3/lenders/${demo.lenderPublicId}/exports/catalog`), 401, 'Access denied. Invalid token.');
    assertExportError(await t.request('GET', `/admin/v3/lenders/${demo.lenderPublicId}/exports/S2/D07`, { token: 'not-a-token' }), 401, 'Access denied. Invalid token.');
    assertExportError(await get('S2/D07', other, demo.lenderPublicId), 403, 'Lender ID mismatch');
    assertExportError(await get('catalog', demo, other.lenderPublicId), 403, 'Lender ID mismatch');
    assertExportError(await get('S9/D07'), 404, 'Unknown section');
    assertExportError(await get('S2/D25'), 404, 'Unknown dataset');
    assertExportError(await get('S2/D99'), 404, 'Unknown dataset');
    assertExportError(await get('S1/D07'), 404, 'Unknown dataset'); // D07 lives in S2
    assertExportError(await get('S1/D06'), 404, 'Dataset D06 is listed in the catalog but not available for export at this time.');
    assertExportError(await get('S2/D12'), 404, 'Dataset D12 is listed in the catalog but not available for export at this time.');
  });

  test('a malformed or misused cursor and an unparseable bound are 500s', async () => {
    assertExportError(await get('S2/D07?cursor=definitely-not-a-cursor'), 500, 'Malformed cursor');
    assertExportError(await get('S2/D07?cursor=%21%21'), 500, 'Malformed cursor');
    const first = await ok('S2/D07?limit=2');
    assertExportError(await get(`S2/D08?cursor=${first.pagination.nextCursor}`), 500, 'Malformed cursor');
    assertExportError(await get(`S2/D07?sort=desc&cursor=${first.pagination.nextCursor}`), 500, 'Malformed cursor');
    assertExportError(await get('S2/D07?since=last-tuesday'), 500, /^Malformed since/);
    assertExportError(await get('S2/D07?until=2026-02-30'), 500, /^Malformed until/);
  });

  test('a dataset made available by option is served', async () => {
    const body = await ok('S1/D04?limit=3');
    assert.equal(body.rows.length, 3);
    assert.deepEqual(body.dataset, { code: 'D04', name: 'Borrower Account Debt Logs' });
  });
});

describe('fetch', () => {
  test('the full body shape', async () => {
    const body = await ok('S2/D07?limit=2');
    assert.deepEqual(Object.keys(body), ['section', 'dataset', 'rows', 'pagination', 'meta']);
    assert.deepEqual(body.section, { code: 'S2', name: 'Payments & Settlements' });
    assert.deepEqual(body.dataset, { code: 'D07', name: 'Borrower Payments' });
    assert.deepEqual(Object.keys(body.pagination), ['limit', 'returned', 'nextCursor']);
    assert.match(body.pagination.nextCursor, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(body.meta, {
      schemaVersion: 'v1', cursorField: 'updated_at', sort: 'asc', since: null, until: null,
      tenantPathKind: 'direct', readFrom: 'primary',
    });
    const via = await ok('S4/D21?limit=1&sort=desc&since=2026-01-01T04:00:00%2B04:00&until=2026-02-01');
    assert.deepEqual(via.meta, {
      schemaVersion: 'v1', cursorField: 'communicated_at', sort: 'desc', since: '2026-01-01T00:00:00.000Z',
      until: '2026-02-01T00:00:00.000Z', tenantPathKind: 'via', readFrom: 'primary',
    });
  });

  test('limit defaults to 500 and is clamped to 1..1000', async () => {
    const cases: [string, number, number][] = [['', 500, SCALE], ['limit=0', 1, 1], ['limit=-3', 1, 1], ['limit=5000', 1000, SCALE], ['limit=7', 7, 7]];
    for (const [query, limit, returned] of cases) {
      const body = await ok(`S2/D07?${query}`);
      assert.equal(body.pagination.limit, limit, query);
      assert.equal(body.pagination.returned, returned, query);
      assert.equal(body.pagination.nextCursor === null, returned === SCALE, query);
    }
  });

  test('since is inclusive and until exclusive on the cursor field, at a tied timestamp', async () => {
    const expected = expectedGeneratedRows(SEED, SCALE, 0, 'D07');
    const tied = expected.findIndex((r, i) => i > 0 && r.updated_at === expected[i - 1]!.updated_at);
    assert.ok(tied > 0, 'the generator made a tie');
    const stamp = expected[tied]!.updated_at as string;
    const atOrAfter = expected.filter((r) => (r.updated_at as string) >= stamp);
    const beforeIt = expected.filter((r) => (r.updated_at as string) < stamp);
    assert.deepEqual((await walk('S2/D07', `since=${stamp}&limit=1000`)).rows, atOrAfter);
    assert.deepEqual((await walk('S2/D07', `until=${stamp}&limit=1000`)).rows, beforeIt);
    const only = await walk('S2/D07', `since=${stamp}&until=${new Date(Date.parse(stamp) + 1).toISOString()}`);
    assert.equal(only.rows.length, 2);
    assert.ok(only.rows.every((r) => r.updated_at === stamp));
  });

  test('asc and desc orders with ties broken by id in the same direction', async () => {
    const expected = expectedGeneratedRows(SEED, SCALE, 0, 'D09');
    const asc = await walk('S2/D09', 'limit=13');
    const desc = await walk('S2/D09', 'limit=13&sort=desc');
    assert.deepEqual(asc.rows, expected);
    assert.deepEqual(desc.rows, [...expected].reverse());
  });

  test('replaying a cursor returns the same page, and it still works after other reads', async () => {
    const first = await ok('S2/D08?limit=25');
    const cursor = first.pagination.nextCursor;
    const a = await ok(`S2/D08?limit=25&cursor=${cursor}`);
    await ok('S2/D08?limit=250&sort=desc');
    const b = await ok(`S2/D08?limit=25&cursor=${cursor}`);
    assert.deepEqual(b, a);
    assert.equal(a.rows.length, 25);
    assert.notDeepEqual(a.rows, first.rows);
  });
});

/** The calendar months of the generated data, as [since, until) ISO strings. */
function months(): [string, string][] {
  const start = new Date(DATA_SPAN.start);
  return Array.from({ length: 21 }, (_, m) => [
    new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + m, 1)).toISOString(),
    new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + m + 1, 1)).toISOString(),
  ]);
}

/** Walks a via dataset month by month, as its reads must be to stay under the gateway budget. */
async function walkByMonth(path: string, query: string): Promise<{ rows: any[]; sizes: number[]; cursors: (string | null)[] }> {
  const all = { rows: [] as any[], sizes: [] as number[], cursors: [] as (string | null)[] };
  for (const [since, until] of months()) {
    const part = await walk(path, `${query}&since=${since}&until=${until}`);
    all.rows.push(...part.rows);
    all.sizes.push(...part.sizes);
    all.cursors.push(...part.cursors);
  }
  return all;
}

describe('via datasets', () => {
  test('pages can be short or empty while nextCursor is not null', async () => {
    const { rows, sizes, cursors } = await walkByMonth('S4/D22', 'limit=5');
    assert.deepEqual(rows, expectedGeneratedRows(SEED, SCALE, 0, 'D22'));
    const notLast = sizes.slice(0, -1);
    assert.ok(notLast.some((n) => n === 0), `an empty page before the end: ${sizes.join(',')}`);
    assert.ok(notLast.some((n) => n > 0 && n < 5), 'a short page before the end');
    assert.ok(sizes.some((n, i) => n < 5 && cursors[i] !== null), 'a short page with more to come');
  });

  test('a via read whose window holds more rows than the budget is a 504, bounded or not; month windows read it all', async () => {
    assertExportError(await get('S4/D23'), 504, 'Gateway timeout');
    assertExportError(await get('S4/D23?limit=1&sort=desc'), 504, 'Gateway timeout');
    assertExportError(await get('S1/D03?limit=10'), 504, 'Gateway timeout');
    assertExportError(await get('S4/D21?limit=10'), 504, 'Gateway timeout');
    // A bound that leaves the window as wide as the data is no cheaper than none.
    assertExportError(await get('S4/D23?limit=1&since=1970-01-01T00:00:00Z'), 504, 'Gateway timeout');
    assertExportError(await get('S4/D23?limit=1&since=2015-01-01T00:00:00Z&until=2035-01-01T00:00:00Z'), 504, 'Gateway timeout');
    const { rows } = await walkByMonth('S4/D23', 'limit=50');
    assert.deepEqual(rows, expectedGeneratedRows(SEED, SCALE, 0, 'D23'));
    // The cost is what is left after the cursor: the end of the data reads without a window.
    const late = await walk('S4/D23', `since=${months()[20]![0]}&until=${months()[20]![1]}&limit=1`);
    const tail = await ok(`S4/D23?limit=1000&cursor=${late.cursors[0]}`);
    assert.deepEqual(tail.rows, late.rows.slice(1));
    // Direct datasets are read by an index on the lender: never a gateway timeout.
    assert.equal((await ok('S2/D07?limit=10&since=1970-01-01T00:00:00Z')).rows.length, 10);
  });
});

describe('totals', () => {
  test('exact, capped, window_required and timeout', async () => {
    const expected = expectedGeneratedRows(SEED, SCALE, 0, 'D07');
    const capped = await ok('S2/D07?limit=1&includeTotal=true');
    assert.deepEqual(capped.pagination, { ...capped.pagination, total: TOTAL_CAP, totalExact: false, totalNote: 'capped' });

    const since = '2025-06-01T00:00:00.000Z';
    const until = '2025-09-01T00:00:00.000Z';
    const inWindow = expected.filter((r) => (r.updated_at as string) >= since && (r.updated_at as string) < until).length;
    const first = await ok(`S2/D07?limit=3&includeTotal=true&since=${since}&until=${until}`);
    const second = await ok(`S2/D07?limit=7&includeTotal=true&since=${since}&until=${until}&cursor=${first.pagination.nextCursor}`);
    for (const page of [first, second]) {
      assert.equal(page.pagination.total, inWindow);
      assert.equal(page.pagination.totalExact, true);
      assert.ok(!('totalNote' in page.pagination));
    }

    // A window is required to count a via dataset, whatever is left to read after the cursor.
    const lastMonth = months()[20]!;
    const late = await ok(`S4/D21?limit=1&since=${lastMonth[0]}&until=${lastMonth[1]}`);
    const noWindow = await ok(`S4/D21?limit=5&includeTotal=true&cursor=${late.pagination.nextCursor}`);
    assert.equal(noWindow.pagination.total, null);
    assert.equal(noWindow.pagination.totalExact, false);
    assert.equal(noWindow.pagination.totalNote, 'window_required');

    // The count runs within the page's request on a smaller budget: a window whose rest after
    // the cursor is cheap to read can still be too wide to count.
    const lateD23 = await ok(`S4/D23?limit=1&since=${lastMonth[0]}&until=${lastMonth[1]}`);
    const wide = await ok(`S4/D23?limit=5&includeTotal=true&since=2026-01-01T00:00:00Z&cursor=${lateD23.pagination.nextCursor}`);
    assert.equal(wide.pagination.total, null);
    assert.equal(wide.pagination.totalExact, false);
    assert.equal(wide.pagination.totalNote, 'timeout');
    assert.notEqual(wide.pagination.nextCursor, null, 'rows and cursor are unaffected');

    const d23 = expectedGeneratedRows(SEED, SCALE, 0, 'D23');
    const month = await ok('S4/D23?limit=5&includeTotal=true&since=2026-03-01&until=2026-04-01');
    assert.equal(month.pagination.total, d23.filter((r) => (r.communicated_at as string).startsWith('2026-03')).length);
    assert.equal(month.pagination.totalExact, true);

    assert.ok(!('total' in (await ok('S2/D07?limit=1&includeTotal=false')).pagination));
  });
});

describe('redaction on served rows', () => {
  test('identity numbers, dob, ip and dropped fields', async () => {
    const users = (await ok('S5/D26?limit=200')).rows;
    assert.ok(users.length > 0);
    for (const u of users) {
      assert.match(u.id_number, /^\*{5}\d{4}$/);
      assert.ok(u.passport_number === null || /^\*{5}\d{4}$/.test(u.passport_number));
      assert.ok(Number.isInteger(u.dob) && u.dob > 1900 && u.dob < 2010);
      assert.match(u.ip_address, /^\d{1,3}\.\d{1,3}\.0\.0\/16$/);
      assert.ok(!('email' in u) && !('password_hash' in u) && !('lender_id' in u) && !('id' in u));
    }
    for (const path of ['S2/D14', 'S3/D20']) {
      for (const r of (await ok(`${path}?limit=50`)).rows) assert.match(r.ip_address, /^\d{1,3}\.\d{1,3}\.0\.0\/16$/, path);
    }
    for (const deal of (await ok('S3/D16?limit=100')).rows) {
      assert.ok(!('first_due_date_timestamp' in deal) && !('everReachedAttempted' in deal));
      assert.match(deal.public_id, /^CASE-/);
    }
    const payments = (await ok('S2/D07?limit=100')).rows;
    assert.ok(payments.every((p: any) => Object.keys(p).length === 11 && !('card_fingerprint' in p)));
  });

  test('D01 from the seeded portfolio: masked phones with dnc, preferred_language, masked ids', async () => {
    const borrowers = (await ok('S1/D01?limit=1000')).rows;
    assert.ok(borrowers.length > 0);
    for (const b of borrowers) {
      assert.match(b.public_id, /^\d+$/);
      assert.ok(['en', 'ar'].includes(b.preferred_language));
      assert.ok(b.id_number === null || /^\*{5}.{4}$/.test(b.id_number));
      assert.ok(b.passport_number === null || /^\*{5}.{4}$/.test(b.passport_number));
      assert.ok(b.dob === null || Number.isInteger(b.dob));
      assert.ok(b.phones.length > 0);
      for (const phone of b.phones) {
        assert.deepEqual(Object.keys(phone), ['key_masked', 'dnc']);
        assert.match(phone.key_masked, /^\+\d{3}\*+\d{3}$/);
        assert.equal(phone.dnc, b.do_not_contact);
      }
      assert.ok(!('emails' in b));
    }
    assert.ok(borrowers.some((b: any) => b.passport_number !== null));
  });
});

describe('tenant isolation', () => {
  test('demo and other read different stores; each token opens only its own path', async () => {
    const mine = await walk('S2/D07', 'limit=1000');
    const theirs = await ok('S2/D07?limit=1000', other);
    assert.deepEqual(theirs.rows, expectedGeneratedRows(SEED, SCALE, 1, 'D07'));
    const mineIds = new Set(mine.rows.map((r) => r.public_id));
    assert.ok(theirs.rows.every((r: any) => !mineIds.has(r.public_id)));
    const theirBorrowers = (await ok('S1/D01?limit=5', other)).rows;
    const myBorrowers = (await ok('S1/D01?limit=5')).rows;
    assert.notDeepEqual(theirBorrowers, myBorrowers);
    assertExportError(await get('S1/D01', other, demo.lenderPublicId), 403, 'Lender ID mismatch');
  });
});
