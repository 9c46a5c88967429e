// The accounts endpoints' recordsJson option: the client sends the caller's per-record JSON texts
// verbatim (the writer serialises each record once and hands the texts over), and the writer's
// texts are exactly the JSON of the records it sends.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import { createAccountWriter } from '../../src/accounts/account-writer.ts';
import { createFlagWriter } from '../../src/accounts/flags.ts';
import type { AccountsRequestOptions } from '../../src/core/api.ts';
import { RawJsonBody } from '../../src/core/transport.ts';
import { ValidationError } from '../../src/core/errors.ts';
import type { LenderClient } from '../../src/client/client.ts';
import { connect, type Connection } from '../../src/connect.ts';
import { FakeService, account } from './fake-service.ts';
import { TEST_SANDBOX_DEFAULTS } from '../helpers/sandbox.ts';

let connection: Connection;
let client: LenderClient;

before(async () => {
  connection = await connect({ sandbox: { ...TEST_SANDBOX_DEFAULTS, seed: 11, scale: 20 } });
  client = connection.client;
});
after(async () => {
  await connection?.close();
});

describe('recordsJson: records serialised once', () => {
  it('the body made of the texts is byte for byte what JSON.stringify({ accounts }) encodes', () => {
    const values = [
      [],
      [{}],
      [{ firstName: 'Amal' }, { firstName: 'أمل', note: 'quote " backslash \\ newline \n tab \t' }],
      [{ name: 'emoji 🦊 and é', n: 1.5, none: null, list: [1, 'two', { three: true }] }, { lone: '\ud800' }],
    ];
    for (const accounts of values) {
      const body = RawJsonBody.ofArray('accounts', accounts.map((a) => JSON.stringify(a))).json;
      assert.ok(Buffer.isBuffer(body));
      assert.deepEqual(body, Buffer.from(JSON.stringify({ accounts })), JSON.stringify(accounts));
    }
  });

  it('names in any script reach the service as written', async () => {
    const names = ['أمل', 'Zoë 🦊', 'O\'Brien "Jr" \\ back'];
    const debtorCompanyId = 'RJ-UTF8';
    const records = names.map((firstName, i) => account({ debtorCompanyId: `${debtorCompanyId}-${i}`, accountId: `RJ-U-${i}`, firstName }));
    const writer = createAccountWriter(client, { batchSize: 3 });
    await pipeline(Readable.from(records), writer);
    assert.equal(writer.summary.accepted, names.length);
    await connection.sandbox!.drain();
    const stored: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    do {
      // Pushed rows are stamped after the seeded data span: this bound skips the seeded debtors.
      const page = await client.fetchPage('D01', { since: '2026-10-01T00:00:00.000Z', limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
      stored.push(...page.rows.filter((r) => String(r.debtor_company_id).startsWith(debtorCompanyId)));
      cursor = page.pagination.nextCursor ?? undefined;
    } while (cursor !== undefined);
    assert.deepEqual(
      stored.map((r) => [r.debtor_company_id, r.first_name]).sort(),
      names.map((name, i) => [`${debtorCompanyId}-${i}`, name]).sort(),
    );
  });

  it('the client sends the texts given, not the records serialised again', async () => {
    const good = account({ accountId: 'RJ-1' });
    const accepted = await client.upsertAccounts([good], { recordsJson: [JSON.stringify(good)] });
    assert.equal(accepted.code, 200);
    // The records are valid but the text is not: the service's 400 proves the text was sent.
    const refused = client.upsertAccounts([good], { recordsJson: [JSON.stringify({ ...good, firstName: '' })] });
    await assert.rejects(refused, (error: unknown) => error instanceof ValidationError && /firstName is required/.test(error.message));
  });

  it('a text count that differs from the record count is a usage error, and nothing is sent', async () => {
    const before = client.stats.requests;
    await assert.rejects(client.upsertAccounts([account(), account()], { recordsJson: ['{}'] }), RangeError);
    await assert.rejects(client.updateStatus([], { recordsJson: ['{}'] }), RangeError);
    assert.equal(client.stats.requests, before);
  });

  it('the writers hand over one text per record, equal to JSON.stringify of what they send', async () => {
    const seen: { records: readonly object[]; json: readonly string[] | undefined }[] = [];
    const api = new FakeService();
    const spy = (inner: typeof api.upsertAccounts) => (records: readonly object[], opts: AccountsRequestOptions = {}) => {
      seen.push({ records, json: opts.recordsJson });
      return inner.call(api, records, opts);
    };
    api.upsertAccounts = spy(api.upsertAccounts);
    api.updateStatus = spy(api.updateStatus);
    const records = [account(), account({ status: 'update', principal: 12.5, dateDue: new Date(Date.UTC(2026, 0, 2)) }), account({ firstName: 'Ünïcødé ✓' })];
    const writer = createAccountWriter(api, { batchSize: 2 });
    await pipeline(Readable.from(records), writer);
    await pipeline(Readable.from([{ status: 'disputed', debtorCompanyId: 'C', accountId: 'A' }]), createFlagWriter(api));
    assert.equal(seen.length, 3);
    for (const call of seen) {
      assert.deepEqual(call.json, call.records.map((r) => JSON.stringify(r)));
    }
    assert.equal(writer.summary.bytes, seen.slice(0, 2).reduce((n, c) => n + Buffer.byteLength(JSON.stringify({ accounts: c.records })), 0));
  });
});
