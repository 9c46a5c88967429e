// writeAll(): the one way a source drives a record writer (setFlags, the session, `lender push`,
// the demo). Against the fake service: every record accounted for, rejects kept or not, a failing
// source or writer stopping the other.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAccountWriter } from '../../src/accounts/account-writer.ts';
import { AbortError } from '../../src/core/errors.ts';
import { numbered, writeAll } from '../../src/accounts/write-all.ts';
import type { RejectEvent } from '../../src/accounts/writer.ts';
import { account, FakeService, rejectWhere } from './fake-service.ts';

describe('writeAll', () => {
  it('writes an array, ends the writer and returns its summary with every reject', async () => {
    const api = new FakeService();
    api.handler = rejectWhere((r) => (r.accountId === 'A-refused' ? 'refused by the service' : undefined));
    const writer = createAccountWriter(api, { batchSize: 2, flushInterval: 0 });
    const result = await writeAll(writer, [account(), account({ principal: 'lots' }), account({ accountId: 'A-refused' }), account()]);
    assert.equal(writer.writableFinished, true);
    assert.deepEqual([result.received, result.accepted, result.rejected], [4, 2, 2]);
    assert.deepEqual(result.rejects.map((r) => [r.index, r.reason]).sort(), [[1, 'invalid'], [2, 'server']]);
    assert.deepEqual(result.rejectedByReason, { invalid: 1, server: 1 });
  });

  it('takes an async iterable', async () => {
    async function* records() {
      for (let i = 0; i < 5; i++) yield account();
    }
    const result = await writeAll(createAccountWriter(new FakeService(), { flushInterval: 0 }), records());
    assert.deepEqual([result.received, result.accepted], [5, 5]);
  });

  it('keeps no rejects with keepRejects: false; the writer still counts and emits them', async () => {
    const writer = createAccountWriter(new FakeService(), { flushInterval: 0 });
    const seen: RejectEvent[] = [];
    writer.on('reject', (r: RejectEvent) => seen.push(r));
    const result = await writeAll(writer, [account({ principal: 'lots' }), account()], { keepRejects: false });
    assert.deepEqual(result.rejects, []);
    assert.equal(result.rejected, 1);
    assert.equal(seen.length, 1);
  });

  it('numbered() gives each element its position, and makes a null a reject like any other', async () => {
    const result = await writeAll(createAccountWriter(new FakeService(), { flushInterval: 0 }), numbered([account(), null, account({ principal: 'lots' })]));
    assert.deepEqual(result.rejects.map((r) => [r.element, r.reason]), [[1, 'malformed'], [2, 'invalid']]);
  });

  it('a source that fails rejects the promise and destroys the writer', async () => {
    async function* failing() {
      yield account();
      throw new Error('disk gone');
    }
    const writer = createAccountWriter(new FakeService(), { flushInterval: 0 });
    await assert.rejects(writeAll(writer, failing()), /disk gone/);
    assert.equal(writer.destroyed, true);
  });

  it('a writer that fails (aborted) rejects the promise and stops reading the source', async () => {
    const controller = new AbortController();
    let read = 0;
    function* endless() {
      for (;;) {
        read += 1;
        if (read === 10) controller.abort(new Error('stopped by the user'));
        yield account();
      }
    }
    const writer = createAccountWriter(new FakeService(), { signal: controller.signal });
    await assert.rejects(writeAll(writer, endless()), (error: unknown) =>
      error instanceof AbortError && (error.cause as Error).message === 'stopped by the user');
    assert.ok(read < 100, `read ${read} records after the abort`);
  });
});
