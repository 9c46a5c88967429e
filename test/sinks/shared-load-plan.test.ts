// The parts a shared load (workers on one PostgreSQL database) is cut into: from the default
// origin, the empty years before the data are skipped as a single export skips them, whatever the
// windows; from an explicit origin every window is a part. Against an in-memory service that
// records every query (the workers' end-to-end runs are in workers-postgres.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeDataset } from '../../src/exports/export-options.ts';
import { planParts } from '../../src/sinks/shared-load.ts';
import { FakeApi, makeRows } from '../exports/fake-api.ts';

const NOW = new Date('2026-01-01T00:00:00Z');
const DATA_START = Date.parse('2025-01-01T00:00:00Z');

test('a first shared load in any windows starts its parts where the data starts', async () => {
  const rows = makeRows(300);
  const resolved = describeDataset('D23');
  for (const window of ['auto', 'month', 'week', 'day', 'P10D'] as const) {
    const api = new FakeApi({ rows, pathKind: 'via' });
    const planned = await planParts({ api, ref: resolved.ref, signal: new AbortController().signal }, resolved, undefined, { window }, NOW);
    assert.equal(planned.mode, 'initial');
    const first = Date.parse(planned.parts[0]!.since!);
    assert.ok(first >= DATA_START - 31 * 86_400_000 && first <= DATA_START, `${window}: the first part starts at ${planned.parts[0]!.since}`);
    assert.ok(api.queries.length < 20, `${window}: ${api.queries.length} probe requests`);
  }
  const fromOrigin = await planParts(
    { api: new FakeApi({ rows, pathKind: 'via' }), ref: resolved.ref, signal: new AbortController().signal }, resolved, undefined,
    { window: 'month', origin: '2015-01-01T00:00:00Z' }, NOW,
  );
  assert.equal(fromOrigin.parts[0]!.since, '2015-01-01T00:00:00.000Z');
  assert.equal(fromOrigin.parts.length, 132, 'a part for every month from the origin');
});
