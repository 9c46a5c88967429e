// The pieces `lender push` and `lender flag` add around the delivery deadline: the duration
// syntax of --delivery-timeout, and logging in retried within the deadline (a run that gave up
// on its login after the client's few attempts would lose every record).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { durationFlag } from '../../src/cli/args.ts';
import { UsageError } from '../../src/cli/command.ts';
import { connectWithin } from '../../src/cli/connect-within.ts';
import type { Connection } from '../../src/connect.ts';
import { AuthenticationError, NetworkError, ServerError } from '../../src/core/errors.ts';

describe('--delivery-timeout durations', () => {
  it('takes h, m, s, ms and bare milliseconds', () => {
    const cases: [string, number][] = [['2m', 120_000], ['90s', 90_000], ['500ms', 500], ['1500', 1500], ['1.5h', 5_400_000], [' 0.5s ', 500]];
    for (const [text, ms] of cases) assert.equal(durationFlag(text, '--delivery-timeout'), ms, text);
    assert.equal(durationFlag(undefined, '--delivery-timeout'), undefined);
  });

  it('refuses zero, negatives, other units and words with a usage error naming the flag', () => {
    for (const bad of ['0', '0s', '0.1ms', '-5s', '2d', '2 m', 'soon', '', '1e3', 'Infinity', '2m30s']) {
      assert.throws(() => durationFlag(bad, '--delivery-timeout'), (e: unknown) => e instanceof UsageError && /^--delivery-timeout must be (a duration|at least 1 ms)/.test(e.message), bad);
    }
  });
});

describe('logging in within the delivery deadline', () => {
  const connection = { close: async () => {} } as unknown as Connection;
  const never = new AbortController().signal;

  it('tries again after transient failures, and returns the connection', async () => {
    let calls = 0;
    const got = await connectWithin(60_000, never, async () => {
      calls += 1;
      if (calls === 1) throw new ServerError('503');
      if (calls === 2) throw new NetworkError('reset');
      return connection;
    });
    assert.equal(got, connection);
    assert.equal(calls, 3);
  });

  it('does not try again after an error that is not transient', async () => {
    let calls = 0;
    await assert.rejects(connectWithin(60_000, never, async () => {
      calls += 1;
      throw new AuthenticationError('wrong password');
    }), AuthenticationError);
    assert.equal(calls, 1);
  });

  it('gives up with the last error once the deadline would pass', { timeout: 60_000 }, async () => {
    let calls = 0;
    await assert.rejects(connectWithin(300, never, async () => {
      calls += 1;
      throw new ServerError(`503 #${calls}`);
    }), (e: unknown) => e instanceof ServerError && e.message === `503 #${calls}`);
  });

  it('stops waiting when the command is aborted', async () => {
    const controller = new AbortController();
    const pending = connectWithin(60_000, controller.signal, async () => {
      setImmediate(() => controller.abort(new Error('received SIGINT')));
      throw new ServerError('503');
    });
    await assert.rejects(pending, (e: unknown) => !(e instanceof ServerError));
  });
});
