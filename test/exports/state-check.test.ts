// A saved state is checked before a load trusts it: an entry written for another dataset (moved
// by hand) and an entry edited into something no load wrote are refused with one line naming the
// entry, instead of skipping rows silently or failing with a JavaScript error. Against a sandbox
// over HTTPS, through `lender export` and `lender sync`.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { checkDatasetState } from '../../src/exports/state-check.ts';
import { ConfigError } from '../../src/core/errors.ts';
import { runLender } from '../helpers/memory-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

let t: TestSandbox;
let dir: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  t = await startTestSandbox({ seed: 12, scale: 300 });
  dir = await mkdtemp(join(tmpdir(), 'lender-state-check-'));
  env = t.cliEnv(dir);
});

after(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

const lines = (text: string): string[] => text.split('\n').filter((line) => line !== '');

test('an entry moved under another dataset is refused, not taken as that dataset\'s high-water mark', async () => {
  const state = join(dir, 'moved.json');
  const first = await runLender(['export', 'D07', '--state', state], env);
  assert.equal(first.code, 0, first.err);
  const file = JSON.parse(readFileSync(state, 'utf8')) as { version: 1; datasets: Record<string, unknown> };
  writeFileSync(state, JSON.stringify({ version: 1, datasets: { D23: file.datasets.D07 } }));
  const moved = await runLender(['export', 'D23', '--state', state], env);
  assert.equal(moved.code, 2, moved.err);
  assert.equal(moved.out, '', 'no row was written');
  assert.equal(moved.err, 'lender export: The saved state of D23 (key "D23") was written for "D07"; remove that entry from the state to load D23 afresh.\n');
  // Once the entry is gone, every row comes.
  writeFileSync(state, JSON.stringify({ version: 1, datasets: {} }));
  const fresh = await runLender(['export', 'D23', '--state', state], env);
  assert.equal(fresh.code, 0, fresh.err);
  const all = await runLender(['export', 'D23'], env);
  assert.equal(lines(fresh.out).length, lines(all.out).length);
});

test('entries edited into what no load wrote: one line each saying what is wrong', () => {
  const good = { version: 2, dataset: 'D07', highWater: { value: '2025-03-01T00:00:00.000Z', ids: ['P-1'] }, load: null };
  assert.deepEqual(checkDatasetState(good, 'D07', 'D07'), good);
  const cases: [unknown, string][] = [
    [5, 'is not an object'],
    [{ ...good, dataset: undefined }, 'names no dataset'],
    [{ ...good, version: 3 }, 'has version 3, not 1 or 2'],
    [{ ...good, highWater: 5 }, 'has a highWater that is not {"value": an ISO instant, "ids": [text, …]} or null'],
    [{ ...good, highWater: { value: 'garbage', ids: [] } }, 'has a highWater that is not {"value": an ISO instant, "ids": [text, …]} or null'],
    [{ ...good, load: { kind: 'initial' } }, 'has an unfinished load whose end is not valid'],
    [{ ...good, load: 'x' }, 'has a load that is not an object or null'],
    [{ ...good, fileBytes: -1 }, 'has a fileBytes that is not a length in bytes'],
    [{ ...good, seen: { a: 1 } }, 'has a seen map that is not {id: cursor value}'],
  ];
  for (const [state, problem] of cases) {
    assert.throws(() => checkDatasetState(state, 'D07', 'D07'), (error: Error) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.message, `The saved state of D07 (key "D07") ${problem}; remove that entry from the state to load D07 afresh.`);
      return true;
    }, JSON.stringify(state));
  }
});

test('lender sync: a dataset whose entry is broken fails alone, named in the summary; the others load', async () => {
  const out = join(dir, 'sync');
  const first = await runLender(['sync', '--to', `ndjson:${out}`, '--datasets', 'D07'], env);
  assert.equal(first.code, 0, first.err);
  const statePath = join(out, '.lender-state.json');
  const file = JSON.parse(readFileSync(statePath, 'utf8')) as { version: 1; datasets: Record<string, Record<string, unknown>> };
  file.datasets.D07!.highWater = 5;
  writeFileSync(statePath, JSON.stringify(file));
  const run = await runLender(['sync', '--to', `ndjson:${out}`, '--datasets', 'D07,D16'], env);
  assert.equal(run.code, 1, run.err);
  const summary = JSON.parse(run.out) as { datasets: Record<string, { rows: number }>; failed: Record<string, string> };
  assert.deepEqual(Object.keys(summary.failed), ['D07']);
  assert.match(summary.failed.D07!, /^The saved state of D07 \(key "D07"\) has a highWater that is not/);
  assert.ok(summary.datasets.D16!.rows > 0);
  assert.match(run.err, /lender sync: D07 failed: The saved state of D07/);
});
