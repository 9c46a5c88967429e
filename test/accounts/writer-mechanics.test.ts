// The record writer's mechanics against a fake ServiceApi, where a test can see every request and
// hold responses back: flush triggers, backpressure, concurrency, key order, 400 splits, a 400
// naming an account not in the request, failures after retries, rejects output, abort.
// writer-sandbox.test.ts and unknown-account-https.test.ts repeat what matters over HTTPS.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, describe, it } from 'node:test';
import { createAccountWriter, type AccountWriter } from '../../src/accounts/account-writer.ts';
import { createFlagWriter, setFlags } from '../../src/accounts/flags.ts';
import { MalformedRecord, SourceRecord } from '../../src/accounts/source-record.ts';
import type { AnomalyEvent } from '../../src/accounts/anomaly.ts';
import type { RejectEvent } from '../../src/accounts/writer.ts';
import { AbortError, AuthenticationError, ConfigError, ServerError, ValidationError } from '../../src/core/errors.ts';
import { FileError } from '../../src/core/file-errors.ts';
import { account, FakeService, gate, rejectWhere } from './fake-service.ts';

async function finish(writer: AccountWriter, records: unknown[]): Promise<RejectEvent[]> {
  const rejects: RejectEvent[] = [];
  writer.on('reject', (r: RejectEvent) => rejects.push(r));
  await pipeline(Readable.from(records, { objectMode: true }), writer);
  return rejects;
}

const dir = await mkdtemp(join(tmpdir(), 'writer-mechanics-'));
after(() => rm(dir, { recursive: true, force: true }));

describe('options', () => {
  it('a bad option is a ConfigError naming it, as for every other option of the library', () => {
    const api = new FakeService();
    for (const [opts, name] of [
      [{ batchSize: 0 }, 'batchSize'], [{ concurrency: 1.5 }, 'concurrency'], [{ maxBatchBytes: -1 }, 'maxBatchBytes'],
      [{ batchSize: 10, maxBuffered: 5 }, 'maxBuffered'], [{ flushInterval: -1 }, 'flushInterval'],
      // From JavaScript: 'yes' is not true, and a number is neither a file nor a stream.
      [{ strict: 'yes' as unknown as boolean }, 'strict'], [{ rejects: 42 as unknown as string }, 'rejects'], [{ rejects: ' ' }, 'rejects'],
    ] as const) {
      assert.throws(() => createAccountWriter(api, opts), (e: unknown) => e instanceof ConfigError && e.message.includes(name), name);
    }
  });
});

describe('flushing', () => {
  it('sends full batches of batchSize and the rest at end()', async () => {
    const api = new FakeService();
    const writer = createAccountWriter(api, { batchSize: 3 });
    await finish(writer, Array.from({ length: 7 }, () => account()));
    assert.deepEqual(api.calls.map((c) => c.records.length), [3, 3, 1]);
    assert.deepEqual(writer.summary, {
      received: 7, accepted: 7, rejected: 0, rejectedByReason: {}, batches: 3, requests: 3, retries: 0,
      bytes: writer.summary.bytes,
    });
    assert.equal(writer.summary.bytes, api.calls.reduce((n, c) => n + Buffer.byteLength(JSON.stringify({ accounts: c.records })), 0));
  });

  it('sends a batch before it would exceed maxBatchBytes', async () => {
    const api = new FakeService();
    const one = Buffer.byteLength(JSON.stringify(account()));
    const writer = createAccountWriter(api, { batchSize: 100, maxBatchBytes: one * 2 + 30 });
    await finish(writer, Array.from({ length: 5 }, () => account()));
    assert.deepEqual(api.calls.map((c) => c.records.length), [2, 2, 1]);
  });

  it('sends a partly filled batch flushInterval after its first record, before end()', async () => {
    const api = new FakeService();
    const writer = createAccountWriter(api, { batchSize: 100, flushInterval: 20 });
    writer.write(account());
    writer.write(account());
    const [event] = await once(writer, 'batch');
    assert.equal(event.records, 2);
    assert.equal(api.calls.length, 1);
    writer.end();
    await once(writer, 'finish');
    assert.equal(api.calls.length, 1);
  });

  it('a source that trickles records without a pause still sees them sent, flushInterval after the first of a batch', async (t) => {
    // The clock is the test's: a record every 30 ms, never 50 ms without a write.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const api = new FakeService();
    const writer = createAccountWriter(api, { batchSize: 10_000, flushInterval: 50 });
    await new Promise((r) => setImmediate(r)); // the schemas load (_construct)
    const sentAt: number[] = [];
    writer.on('batch', (event: { records: number }) => sentAt.push(event.records));
    for (let i = 0; i < 10; i += 1) {
      writer.write(account());
      await new Promise((r) => setImmediate(r));
      t.mock.timers.tick(30);
      await new Promise((r) => setImmediate(r));
    }
    // Records at 0, 30 (sent at 50), 60, 90 (sent at 110), 120, 150 (170), …
    assert.deepEqual(sentAt, [2, 2, 2, 2, 2]);
    writer.end();
    await once(writer, 'finish');
    assert.equal(writer.summary.accepted, 10);
  });

  it("emits 'finish' only once the last batch has settled", async () => {
    const api = new FakeService();
    const held = gate();
    api.handler = () => held.promise;
    const writer = createAccountWriter(api, { batchSize: 10 });
    let finished = false;
    writer.on('finish', () => (finished = true));
    writer.end(account());
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.equal(api.calls.length, 1);
    assert.equal(finished, false);
    held.open();
    await once(writer, 'finish');
    assert.equal(writer.summary.accepted, 1);
  });
});

describe('backpressure and concurrency', () => {
  it('write() returns false once maxBuffered records are held, and nothing more is taken in', async () => {
    const api = new FakeService();
    const held = gate();
    api.handler = () => held.promise;
    const writer = createAccountWriter(api, { batchSize: 10, concurrency: 2, maxBuffered: 30, highWaterMark: 4 });
    // The first record waits for the schema to load (zod loads with the first writer), then is taken in.
    await new Promise<void>((resolve, reject) => writer.write(account(), (error) => (error ? reject(error) : resolve())));
    let accepted = 1;
    while (writer.write(account())) accepted += 1;
    // The write that reached the limit is held back, so the writer's own queue (highWaterMark)
    // fills up and write() says stop.
    assert.ok(accepted <= 30 + 4, `${accepted} writes accepted`);
    assert.equal(writer.bufferState().buffered, 30);
    assert.equal(api.calls.length, 2);
    assert.equal(api.maxInFlight, 2);
    held.open();
    writer.end();
    await once(writer, 'finish');
    assert.equal(writer.summary.accepted, writer.summary.received);
    assert.ok(writer.bufferState().peakBuffered <= 30);
  });

  it('a source faster than the service never makes the writer hold more than its limits', async () => {
    const api = new FakeService();
    api.handler = () => new Promise((r) => setImmediate(r));
    const writer = createAccountWriter(api, { batchSize: 20, concurrency: 3, maxBuffered: 50, highWaterMark: 8 });
    let maxQueued = 0;
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < 3000; i++) {
          maxQueued = Math.max(maxQueued, writer.writableLength);
          yield account();
        }
      })(),
    );
    await pipeline(source, writer);
    assert.equal(writer.summary.accepted, 3000);
    assert.ok(writer.bufferState().peakBuffered <= 50, `peak ${writer.bufferState().peakBuffered}`);
    assert.ok(maxQueued <= 8, `queued ${maxQueued}`);
    assert.ok(api.maxInFlight <= 3);
    assert.equal(api.maxInFlight, 3);
  });

  it('records of one key reach the service in write order with several batches in flight', async () => {
    const api = new FakeService();
    // Requests complete in a scrambled order, so a later batch is often applied first; only a key
    // that is never in two requests at once keeps its order.
    let n = 0;
    api.handler = () => new Promise((r) => setTimeout(r, (n++ * 7) % 5));
    const writer = createAccountWriter(api, { batchSize: 3, concurrency: 4 });
    const keys = ['K1', 'K2', 'K3', 'K4', 'K5', 'K6', 'K7', 'K8'];
    let seed = 7;
    const records = Array.from({ length: 240 }, (_, i) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return account({ debtorCompanyId: 'C', accountId: keys[seed % keys.length], subAccountId: 'S', principal: String(i), status: 2 });
    });
    await finish(writer, records);
    assert.equal(writer.summary.accepted, 240);
    assert.ok(api.maxInFlight >= 2, 'batches overlapped');
    for (const key of keys) {
      const order = api.processed.filter((r) => r.accountId === key).map((r) => Number(r.principal));
      assert.deepEqual(order, [...order].sort((a, b) => a - b));
    }
    assert.equal(api.processed.length, 240);
  });
});

describe('rejects', () => {
  it('never sends an invalid record and reports it with its index and the schema messages', async () => {
    const api = new FakeService();
    const writer = createAccountWriter(api, { batchSize: 10 });
    const rejects = await finish(writer, [account(), account({ principal: 'abc' }), 7, account()]);
    assert.equal(api.sentRecords().length, 2);
    assert.deepEqual(
      rejects.map((r) => [r.index, r.reason, r.errors]),
      [
        [1, 'invalid', ['principal must be a valid number']],
        [2, 'malformed', ['account must be an object']],
      ],
    );
    assert.deepEqual(writer.summary.rejectedByReason, { invalid: 1, malformed: 1 });
  });

  it('after a 400, rejects the named record with the service message and resends the rest', async () => {
    const api = new FakeService();
    api.handler = rejectWhere((r) => (r.merchant === 'bad' ? 'merchant is not allowed' : undefined));
    const writer = createAccountWriter(api, { batchSize: 10 });
    const records = [account(), account({ merchant: 'bad' }), account()];
    const rejects = await finish(writer, records);
    assert.deepEqual(rejects.map((r) => [r.index, r.reason, r.errors]), [[1, 'server', ['merchant is not allowed']]]);
    assert.deepEqual(api.calls.map((c) => c.records.length), [3, 2]);
    assert.deepEqual(writer.summary, { ...writer.summary, received: 3, accepted: 2, rejected: 1, batches: 1, requests: 2 });
  });

  it('after a 400 naming an accountId with several records, isolates them and rejects only the bad one', async () => {
    const api = new FakeService();
    api.handler = rejectWhere((r) => (r.merchant === 'bad' ? 'merchant is not allowed' : undefined));
    const writer = createAccountWriter(api, { batchSize: 10 });
    const same = { debtorCompanyId: 'C', accountId: 'A' };
    const records = [account({ ...same, subAccountId: 'S1' }), account({ ...same, subAccountId: 'S2', merchant: 'bad' }), account()];
    const rejects = await finish(writer, records);
    assert.deepEqual(rejects.map((r) => [r.index, r.errors]), [[1, ['merchant is not allowed']]]);
    assert.equal(writer.summary.accepted, 2);
    assert.deepEqual(api.calls.map((c) => c.records.map((r) => r.subAccountId)), [['S1', 'S2', 'S-1'], ['S-1'], ['S1'], ['S2']]);
  });

  it('reports every record of a request that still fails after the retries, and goes on', async () => {
    const api = new FakeService();
    api.handler = (records) => {
      if (records.some((r) => r.merchant === 'boom')) throw new ServerError('The service failed (HTTP 500) after 5 attempts.', { status: 500 });
    };
    const writer = createAccountWriter(api, { batchSize: 2 });
    const rejects = await finish(writer, [account(), account({ merchant: 'boom' }), account(), account()]);
    assert.deepEqual(rejects.map((r) => [r.index, r.reason, r.errors]), [
      [0, 'failed', ['The service failed (HTTP 500) after 5 attempts.']],
      [1, 'failed', ['The service failed (HTTP 500) after 5 attempts.']],
    ]);
    assert.deepEqual(writer.summary, { ...writer.summary, received: 4, accepted: 2, rejected: 2, rejectedByReason: { failed: 2 } });
  });

  it('reports records of an auth failure too, rather than dropping them', async () => {
    const api = new FakeService();
    api.handler = () => {
      throw new AuthenticationError('Login was refused.');
    };
    const writer = createAccountWriter(api, { batchSize: 2 });
    await finish(writer, [account(), account(), account()]);
    assert.deepEqual(writer.summary, { ...writer.summary, received: 3, accepted: 0, rejected: 3 });
  });

  it('a rejects file that cannot be opened fails the writer before it takes a record: one FileError, nothing sent', async () => {
    const plain = join(dir, 'plain.txt');
    await writeFile(plain, 'x');
    // A folder; a path under a file (the folder cannot be made: a FileError naming the folder).
    for (const [path, reason] of [[dir, 'illegal operation on a directory (EISDIR)'], [join(plain, 'r.ndjson'), undefined]] as const) {
      const api = new FakeService();
      const writer = createAccountWriter(api, { rejects: path });
      await assert.rejects(finish(writer, [account(), account({ language: 'fr' })]), (error: unknown) =>
        error instanceof FileError && (reason === undefined || error.message === `cannot write the rejects file ${path}: ${reason}`), path);
      assert.deepEqual([writer.summary.received, writer.summary.rejected, api.calls.length], [0, 0, 0]);
    }
    // Stopped while the file opens: the stop's own error, not one merged with the file's.
    const stopped = createAccountWriter(new FakeService(), { rejects: dir, signal: AbortSignal.abort(new Error('stopped by the user')) });
    const [error] = await once(stopped, 'error');
    assert.equal(error.constructor, AbortError);
    assert.equal((error.cause as Error).message, 'stopped by the user');
  });

  it('writes rejects as NDJSON lines to a file, with the source position', async () => {
    const api = new FakeService();
    const path = join(dir, 'rejects.ndjson');
    const writer = createAccountWriter(api, { rejects: path });
    await finish(writer, [
      new SourceRecord(account({ language: 'fr' }), { line: 3 }),
      new MalformedRecord('{"a":', { line: 4 }, 'line 4 is not valid JSON: Unexpected end of JSON input'),
      new SourceRecord(account(), { line: 5 }),
    ]);
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => [l.index, l.line, l.reason, l.errors]),
      [
        [0, 3, 'invalid', ['language must be one of en, ar']],
        [1, 4, 'malformed', ['line 4 is not valid JSON: Unexpected end of JSON input']],
      ],
    );
    assert.equal(lines[0].record.language, 'fr');
    assert.equal(lines[1].record, '{"a":');
  });

  it("waits for a slow rejects stream instead of buffering its lines without bound", async () => {
    const api = new FakeService();
    const sink = new PassThrough({ highWaterMark: 64 });
    const writer = createAccountWriter(api, { rejects: sink, highWaterMark: 1 });
    let lines = 0;
    sink.on('data', () => (lines += 1));
    sink.pause();
    let accepted = 0;
    while (writer.write({ status: 9 }) && accepted < 100) accepted += 1;
    assert.ok(accepted < 100, 'write() said stop while the rejects stream was full');
    sink.resume();
    writer.end();
    await once(writer, 'finish');
    assert.equal(writer.summary.rejected, writer.summary.received);
    assert.ok(lines > 0);
  });
});

describe('a 400 naming an account that is not in the request', () => {
  const ghost = (errors = ['account GHOST is unknown']) => new ValidationError('The service refused the request.', [{ accountId: 'GHOST', errors }], { status: 400 });

  function collect(writer: AccountWriter): AnomalyEvent[] {
    const anomalies: AnomalyEvent[] = [];
    writer.on('anomaly', (a: AnomalyEvent) => anomalies.push(a));
    return anomalies;
  }

  it('resends the records it did not name, which are accepted, and reports the account it named', async () => {
    const api = new FakeService();
    let calls = 0;
    api.handler = () => {
      if (calls++ === 0) throw ghost();
    };
    const writer = createAccountWriter(api, { batchSize: 10 });
    const anomalies = collect(writer);
    const records = [account(), account(), account()];
    const rejects = await finish(writer, records);
    assert.deepEqual(rejects, []);
    assert.deepEqual(anomalies, [{ kind: 'unknown-account', batch: 1, accountId: 'GHOST', errors: ['account GHOST is unknown'], records: 3, action: 'resent' }]);
    assert.deepEqual(api.calls.map((c) => c.records.map((r) => r.accountId)), [records.map((r) => r.accountId), records.map((r) => r.accountId)]);
    assert.deepEqual(writer.summary, { ...writer.summary, received: 3, accepted: 3, rejected: 0, batches: 1, requests: 2 });
  });

  it('with records of the request named too, rejects those, resends the rest and reports the unknown one', async () => {
    const api = new FakeService();
    api.handler = (records) => {
      const bad = records.filter((r) => r.merchant === 'bad');
      if (bad.length > 0) {
        throw new ValidationError('The service refused the request.', [
          ...bad.map((r) => ({ accountId: String(r.accountId), errors: ['merchant is not allowed'] })),
          { accountId: 'GHOST', errors: ['who is this?'] },
        ], { status: 400 });
      }
    };
    const writer = createAccountWriter(api, { batchSize: 10 });
    const anomalies = collect(writer);
    const rejects = await finish(writer, [account(), account({ merchant: 'bad' }), account()]);
    assert.deepEqual(rejects.map((r) => [r.index, r.reason, r.errors]), [[1, 'server', ['merchant is not allowed']]]);
    assert.deepEqual(anomalies.map((a) => [a.accountId, a.action]), [['GHOST', 'resent']]);
    assert.equal(writer.summary.accepted, 2);
  });

  it('when the resend meets the same answer, rejects the records with it rather than loop', async () => {
    const api = new FakeService();
    api.handler = () => {
      throw ghost();
    };
    const writer = createAccountWriter(api, { batchSize: 10 });
    const anomalies = collect(writer);
    const rejects = await finish(writer, [account(), account()]);
    assert.equal(api.calls.length, 2);
    assert.deepEqual(rejects.map((r) => [r.index, r.reason, r.errors]), [
      [0, 'server', ['account "GHOST" (not in this request): account GHOST is unknown']],
      [1, 'server', ['account "GHOST" (not in this request): account GHOST is unknown']],
    ]);
    assert.deepEqual(anomalies.map((a) => [a.accountId, a.action]), [['GHOST', 'resent'], ['GHOST', 'rejected']]);
    assert.deepEqual(writer.summary, { ...writer.summary, received: 2, accepted: 0, rejected: 2, rejectedByReason: { server: 2 } });
  });

  it("without an 'anomaly' listener it is a process warning naming the account, never silent", async (t) => {
    const api = new FakeService();
    let calls = 0;
    api.handler = () => {
      if (calls++ === 0) throw ghost();
    };
    // Caught here rather than printed in the middle of the test output.
    const emitWarning = t.mock.method(process, 'emitWarning', () => {});
    const writer = createAccountWriter(api, { batchSize: 10 });
    await finish(writer, [account()]);
    assert.equal(emitWarning.mock.callCount(), 1);
    const [message, type] = emitWarning.mock.calls[0]!.arguments as unknown as [string, string];
    assert.equal(type, 'LenderAnomalyWarning');
    assert.match(message, /naming account "GHOST", which was not in it \(account GHOST is unknown\); the records it did not name were sent again/);
    assert.equal(writer.summary.accepted, 1);
  });
});

describe('retries, abort and flags', () => {
  it('counts the retries the client reports for its own requests, and emits them', async () => {
    const api = new FakeService();
    api.handler = (_records, _endpoint, opts) => {
      opts.onRetry?.({ attempt: 1, delayMs: 0, error: new ServerError('x'), method: 'POST', path: '/admin/v3/lenders/fake/accounts' });
    };
    const writer = createAccountWriter(api, { batchSize: 1 });
    let emitted = 0;
    writer.on('retry', () => void (emitted += 1));
    await finish(writer, [account(), account()]);
    assert.equal(writer.summary.retries, 2);
    assert.equal(emitted, 2);
  });

  it('an abort stops the writer with the reason and cancels the requests in flight', async () => {
    const api = new FakeService();
    let seenSignal: AbortSignal | undefined;
    api.handler = (_r, _e, opts) => {
      seenSignal = opts.signal;
      return new Promise(() => {});
    };
    const controller = new AbortController();
    const writer = createAccountWriter(api, { batchSize: 1, signal: controller.signal });
    writer.write(account());
    await new Promise((r) => setImmediate(r));
    controller.abort(new Error('stop now'));
    const [error] = await once(writer, 'error');
    // The library's AbortError, the signal's reason its cause.
    assert.ok(error instanceof AbortError, String(error));
    assert.equal(error.message, 'Writing accounts was aborted.');
    assert.equal((error.cause as Error).message, 'stop now');
    assert.equal(seenSignal?.aborted, true);
    // Aborted without a reason (the signal's own DOMException): the same class, for flags too.
    const bare = new AbortController();
    const flags = createFlagWriter(new FakeService(), { signal: bare.signal });
    bare.abort();
    const [flagsError] = await once(flags, 'error');
    assert.ok(flagsError instanceof AbortError, String(flagsError));
    assert.equal(flagsError.message, 'Writing status updates was aborted.');
  });

  it('a stop rejects every record held as stopped: in flight (maybe applied), sealed, open, parked; an answer after it counts nothing; the rejects file holds them all', async () => {
    const api = new FakeService();
    const first = gate();
    let requests = 0;
    api.handler = async () => {
      requests += 1;
      // The first request is answered only after the stop, as a response already on its way.
      if (requests === 1) await first.promise;
    };
    const path = join(dir, 'stopped-rejects.ndjson');
    const controller = new AbortController();
    const writer = createAccountWriter(api, { batchSize: 2, concurrency: 1, maxBuffered: 100, flushInterval: 60_000, rejects: path, signal: controller.signal });
    const rejects: RejectEvent[] = [];
    writer.on('reject', (r: RejectEvent) => rejects.push(r));
    const same = { debtorCompanyId: 'C-same', accountId: 'A-same', subAccountId: 'S-1' };
    // 0,1: in flight; 2,3: sealed behind them; 4: same key as 0, parked; 5: open; 6: invalid.
    for (const record of [account(same), account(), account(), account(), account(same), account(), account({ language: 'fr' })]) writer.write(record);
    // The writer takes records once its rejects file is open (a turn of the thread pool).
    for (const until = Date.now() + 10_000; requests === 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 1));
    await new Promise((r) => setImmediate(r));
    assert.equal(requests, 1);
    controller.abort(new Error('stopped by the user'));
    const [error] = await once(writer, 'error');
    assert.ok(error instanceof AbortError, String(error));
    assert.equal((error.cause as Error).message, 'stopped by the user');
    first.open();
    await new Promise((r) => setTimeout(r, 10));
    const summary = writer.summary;
    assert.deepEqual([summary.received, summary.accepted, summary.rejected], [7, 0, 7]);
    assert.deepEqual(summary.rejectedByReason, { invalid: 1, stopped: 6 });
    assert.deepEqual(rejects.map((r) => [r.index, r.reason, r.errors[0]]), [
      [6, 'invalid', 'language must be one of en, ar'],
      [0, 'stopped', 'stopped while its request was in flight: the service may have applied it'],
      [1, 'stopped', 'stopped while its request was in flight: the service may have applied it'],
      [2, 'stopped', 'stopped before it was sent'],
      [3, 'stopped', 'stopped before it was sent'],
      [4, 'stopped', 'stopped before it was sent'],
      [5, 'stopped', 'stopped before it was sent'],
    ]);
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l) as RejectEvent);
    assert.deepEqual(lines.map((l) => [l.index, l.reason]), rejects.map((r) => [r.index, r.reason]));
  });

  it('a stop while the rejects file is behind still leaves every reject line in it', async () => {
    const api = new FakeService();
    const path = join(dir, 'many-rejects.ndjson');
    const controller = new AbortController();
    const writer = createAccountWriter(api, { rejects: path, signal: controller.signal, highWaterMark: 100_000 });
    // Invalid records with some weight each: the file stream is still writing when the stop comes.
    const padding = 'x'.repeat(2_000);
    for (let i = 0; i < 5_000; i += 1) writer.write({ status: 9, note: padding });
    while (writer.summary.rejected < 1_000) await new Promise((r) => setImmediate(r));
    const closed = new Promise((r) => writer.once('close', r));
    controller.abort(new Error('stopped by the user'));
    const [error] = await once(writer, 'error');
    assert.ok(error instanceof AbortError, String(error));
    assert.equal((error.cause as Error).message, 'stopped by the user');
    await closed;
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    assert.ok(writer.summary.rejected > 0);
    assert.equal(lines.length, writer.summary.rejected);
    assert.equal(writer.summary.received, writer.summary.accepted + writer.summary.rejected);
  });

  it('a record whose getter throws is rejected as invalid; the others go on', async () => {
    const api = new FakeService();
    const writer = createAccountWriter(api);
    const bad = account();
    Object.defineProperty(bad, 'additionalData', { enumerable: true, get() { throw new Error('cannot read this'); } });
    const rejects = await finish(writer, [account(), bad, account()]);
    assert.deepEqual(rejects.map((r) => [r.index, r.reason, r.errors]), [[1, 'invalid', ['record cannot be read: cannot read this']]]);
    assert.deepEqual([writer.summary.received, writer.summary.accepted, writer.summary.rejected], [3, 2, 1]);
  });

  it('a failure that is not a service error (a bug) stops the writer instead of becoming rejects', async () => {
    const api = new FakeService();
    api.handler = () => {
      throw new TypeError('boom');
    };
    const writer = createAccountWriter(api);
    await assert.rejects(finish(writer, [account()]), /boom/);
  });

  it('the flag writer and setFlags use the status-update endpoint, schema and key', async () => {
    const api = new FakeService();
    api.handler = rejectWhere((r) => (r.accountId === 'missing' ? 'account missing not found for debtor C' : undefined));
    const result = await setFlags(api, [
      { status: 'doNotContact', debtorCompanyId: 'C', accountId: 'A' },
      { status: 'disputed', debtorCompanyId: 'C', accountId: 'missing' },
      { status: 2, debtorCompanyId: 'C', accountId: 'B' },
      null,
    ]);
    assert.deepEqual(result.rejects.map((r) => [r.element, r.reason, r.errors]), [
      [2, 'invalid', ['Invalid status value. Accepted values: 5, 6 (or "disputed", "doNotContact")']],
      [3, 'malformed', ['account must be an object']],
      [1, 'server', ['account missing not found for debtor C']],
    ]);
    assert.deepEqual({ ...result, rejects: [] }, { ...result, rejects: [], received: 4, accepted: 1, rejected: 3 });
    assert.deepEqual(api.calls.map((c) => [c.endpoint, c.records]), [
      ['update-status', [{ status: 6, debtorCompanyId: 'C', accountId: 'A' }, { status: 5, debtorCompanyId: 'C', accountId: 'missing' }]],
      ['update-status', [{ status: 6, debtorCompanyId: 'C', accountId: 'A' }]],
    ]);
    const writer = createFlagWriter(api, { batchSize: 1 });
    writer.end({ status: 5, debtorCompanyId: 'C', accountId: 'A' });
    await once(writer, 'finish');
    assert.equal(writer.summary.accepted, 1);
  });
});
