// --min-split: how far `lender export` and `lender sync` halve a window the gateway times out on.
// A sandbox whose gateway allows a via read only 10 rows left in its window (other tenants'
// candidates counted) times D03 out even in windows of an hour, the default floor; a floor of a
// second lets the same export finish with every row.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLender } from '../helpers/memory-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

let t: TestSandbox;
let dir: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  t = await startTestSandbox({ seed: 5, scale: 5000, viaBudget: 10 });
  dir = await mkdtemp(join(tmpdir(), 'lender-min-split-'));
  env = t.cliEnv(dir);
});

after(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

const lender = (argv: string[]) => runLender(argv, env);

describe('--min-split', () => {
  test('export: the default floor of an hour fails D03 with a one-line window timeout; PT1S exports every row once', async () => {
    const floor = await lender(['export', 'D03', '--limit', '5']);
    assert.equal(floor.code, 1, floor.err);
    assert.match(floor.err, /^lender export: Reading D03 in the window .* still timed out \(504\) at the minimum window span of 1 hour; retry later, or pass a smaller minSplitSpan/);
    const fine = await lender(['export', 'D03', '--limit', '5', '--min-split', 'PT1S']);
    assert.equal(fine.code, 0, fine.err);
    const ids = fine.out.trimEnd().split('\n').map((l) => (JSON.parse(l) as { public_id: string }).public_id);
    assert.ok(ids.length > 1000, `${ids.length} rows`);
    assert.equal(new Set(ids).size, ids.length, 'each row once');
  });

  test('sync takes it too, and a span that is no duration is a usage error', async () => {
    const out = join(dir, 'sync');
    const r = await lender(['sync', '--to', `ndjson:${out}`, '--datasets', 'D03', '--limit', '5', '--min-split', 'PT1S']);
    assert.equal(r.code, 0, r.err);
    const summary = JSON.parse(r.out) as { datasets: { D03: { rows: number; splits: number } } };
    assert.ok(summary.datasets.D03.splits > 0, 'windows were split');
    const lines = (await readFile(join(out, 'D03.ndjson'), 'utf8')).trimEnd().split('\n');
    assert.equal(lines.length, summary.datasets.D03.rows);
    const bad = await lender(['export', 'D03', '--min-split', 'soon']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /^lender export: --min-split /);
  });
});
