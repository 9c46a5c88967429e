// Every documented error case (docs/service-contract.md, errors), produced by the sandbox over HTTPS and mapped
// to its typed error carrying the server's message.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RetryEvent } from '../../src/core/api.ts';
import { LenderClient } from '../../src/client/client.ts';
import {
  AuthenticationError, DatasetUnavailableError, GatewayTimeoutError, LenderMismatchError, ServerError,
  UnknownDatasetError, UnknownSectionError, ValidationError,
} from '../../src/core/errors.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const fast = { baseDelayMs: 1, maxDelayMs: 5 };

describe('documented errors over HTTPS', () => {
  let t: TestSandbox;
  let client: LenderClient;
  const clients: LenderClient[] = [];

  before(async () => {
    t = await startTestSandbox();
    client = await LenderClient.login({ ...t.sandbox.credentials('demo'), retry: fast });
    clients.push(client);
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await t.close();
  });

  it('401 at login → AuthenticationError "Incorrect username or password."', async () => {
    await assert.rejects(LenderClient.login({ ...t.sandbox.credentials('demo'), email: 'nobody@example.com' }), (error: unknown) => {
      assert.ok(error instanceof AuthenticationError);
      assert.equal(error.serverMessage, 'Incorrect username or password.');
      return true;
    });
  });

  it("403 when the path names another lender's id → LenderMismatchError", async () => {
    const raw = await t.loginAs('demo');
    const otherId = t.sandbox.lenders.find((l) => l.lender === 'other')!.lenderPublicId;
    assert.notEqual(otherId, raw.lenderPublicId);
    const mismatched = LenderClient.resume({
      ...t.sandbox.credentials('demo'),
      session: { ...raw, lenderPublicId: otherId },
    });
    clients.push(mismatched);
    for (const call of [() => mismatched.fetchPage('D07'), () => mismatched.catalog()]) {
      await assert.rejects(call(), (error: unknown) => {
        assert.ok(error instanceof LenderMismatchError, String(error));
        assert.equal(error.status, 403);
        assert.equal(error.serverMessage, 'Lender ID mismatch');
        assert.ok(error.requestId, 'requestId is carried');
        return true;
      });
    }
    assert.equal(mismatched.stats.retries, 0);
  });

  it('404 Unknown section → UnknownSectionError', async () => {
    await assert.rejects(client.fetchPage({ section: 'S9', dataset: 'D07' }), (error: unknown) => {
      assert.ok(error instanceof UnknownSectionError);
      assert.equal(error.serverMessage, 'Unknown section');
      assert.match(error.message, /S9/);
      return true;
    });
  });

  it('404 Unknown dataset → UnknownDatasetError (also a known code under the wrong section)', async () => {
    for (const ref of [{ section: 'S2', dataset: 'D99' }, { section: 'S1', dataset: 'D07' }]) {
      await assert.rejects(client.fetchPage(ref), (error: unknown) => {
        assert.ok(error instanceof UnknownDatasetError, `${ref.section}/${ref.dataset}: ${String(error)}`);
        assert.equal(error.serverMessage, 'Unknown dataset');
        return true;
      });
    }
  });

  it('404 for a listed but unavailable dataset (D04) → DatasetUnavailableError with the code', async () => {
    await assert.rejects(client.fetchPage('D04'), (error: unknown) => {
      assert.ok(error instanceof DatasetUnavailableError);
      assert.equal(error.dataset, 'D04');
      assert.equal(error.serverMessage, 'Dataset D04 is listed in the catalog but not available for export at this time.');
      return true;
    });
  });

  it('400 on accounts → ValidationError with per-account failures', async () => {
    const accounts = [
      { status: 1, debtorCompanyId: 'C-ERR-1', lastName: 'X', language: 'en', accountId: 'A-ERR-1', subAccountId: 'S-1', principal: '100' },
      { status: 1, debtorCompanyId: 'C-ERR-2', firstName: 'Y', lastName: 'Z', language: 'en', accountId: 'A-ERR-2', subAccountId: 'S-1', principal: 'abc' },
    ];
    await assert.rejects(client.upsertAccounts(accounts), (error: unknown) => {
      assert.ok(error instanceof ValidationError, String(error));
      assert.equal(error.status, 400);
      const byId = new Map(error.failures.map((f) => [f.accountId, f.errors]));
      assert.ok(byId.get('A-ERR-1')?.includes('firstName is required'), JSON.stringify(error.failures));
      assert.ok(byId.get('A-ERR-2')?.includes('principal must be a valid number'), JSON.stringify(error.failures));
      return true;
    });
  });

  it('400 on update-status → ValidationError naming the accepted values', async () => {
    await assert.rejects(client.updateStatus([{ status: 7, debtorCompanyId: 'C-1', accountId: 'A-1' }]), (error: unknown) => {
      assert.ok(error instanceof ValidationError);
      assert.ok(error.failures.some((f) => f.errors.includes('Invalid status value. Accepted values: 5, 6')), JSON.stringify(error.failures));
      return true;
    });
  });

  it('a valid upsert and status update are accepted', async () => {
    const accepted = await client.upsertAccounts([{
      status: 1, debtorCompanyId: 'C-OK-1', firstName: 'A', lastName: 'B', language: 'en', accountId: 'A-OK-1',
      subAccountId: 'S-1', principal: '100',
      birthDate: '04/04/1984', dateDue: '01/06/2027', phones: [{ number: '+971500000004' }], loanType: 3,
    }]);
    assert.equal(accepted.code, 200);
    assert.equal((await client.updateStatus([{ status: 5, debtorCompanyId: 'C-OK-1', accountId: 'A-OK-1' }])).code, 200);
  });

  it('500 for a malformed cursor → ServerError with requestId, hinting at the cursor', async () => {
    await assert.rejects(client.fetchPage('D07', { cursor: 'not-a-cursor' }, { retry: { attempts: 2 } }), (error: unknown) => {
      assert.ok(error instanceof ServerError);
      assert.ok(!(error instanceof GatewayTimeoutError));
      assert.equal(error.status, 500);
      assert.ok(error.requestId);
      assert.match(error.message, /cursor/);
      return true;
    });
  });

  describe('with injected faults', () => {
    after(() => {
      t.sandbox.setFaults({ faults: {} });
    });

    it('504 on every request → GatewayTimeoutError once the attempts are spent', async () => {
      t.sandbox.setFaults({ faults: { '504': 1 } });
      const events: RetryEvent[] = [];
      const onRetry = (e: RetryEvent) => events.push(e);
      client.on('retry', onRetry);
      try {
        await assert.rejects(client.fetchPage('D23', {}, { retry: { attempts: 3 } }), GatewayTimeoutError);
        assert.equal(events.length, 2);
        assert.ok(events.every((e) => e.error instanceof GatewayTimeoutError && e.method === 'GET' && !e.path.includes('?')));
        events.length = 0;
        // The export streams switch 504 retries off: a 504 there means "ask for less".
        await assert.rejects(client.fetchPage('D23', {}, { retry: { attempts: 3, retryGatewayTimeout: false } }), GatewayTimeoutError);
        assert.equal(events.length, 0);
      } finally {
        client.off('retry', onRetry);
      }
    });

    it('500 on every request → ServerError after exactly the configured attempts', async () => {
      t.sandbox.setFaults({ faults: { '500': 1 } });
      const before = (await t.request('GET', '/__sandbox/stats')).body.requests as number;
      const sent = client.stats.requests;
      await assert.rejects(client.catalog({ retry: { attempts: 4 } }), (error: unknown) => {
        assert.ok(error instanceof ServerError);
        assert.equal(error.status, 500);
        return true;
      });
      assert.equal(client.stats.requests - sent, 4);
      // Admin calls are not counted, so the sandbox saw exactly the four attempts.
      assert.equal((await t.request('GET', '/__sandbox/stats')).body.requests - before, 4);
    });
  });
});
