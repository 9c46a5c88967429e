// collectGarbage: a full, forced collection now, without leaving `gc` to any other context.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { collectGarbage } from '../src/core/collect-garbage.ts';
import { countForcedGcs } from './helpers/forced-gcs.ts';

test('collects what nothing references, as one forced full collection, and leaves no gc behind', async () => {
  let ref: WeakRef<object> | undefined;
  (() => {
    ref = new WeakRef({ rows: Array.from({ length: 1000 }, (_, i) => ({ i })) });
  })();
  // A WeakRef's target is kept until the job that made it ends.
  await new Promise((resolve) => setImmediate(resolve));
  const forced = await countForcedGcs(async () => {
    collectGarbage();
    collectGarbage();
  });
  assert.equal(ref!.deref(), undefined);
  assert.equal(forced, 2);
  assert.equal(runInNewContext('typeof gc'), 'undefined', 'a context made later has no gc');
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
});
