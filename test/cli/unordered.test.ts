// --unordered: `lender export` and `lender sync` read several windows at once and hand each page on
// as it arrives. Which order pages arrive in depends on timing, so these tests check what does not:
// the flag reaches the export as `ordered: false`, every row comes once and they are the rows of an
// ordered run, the state left by such a run is complete, and the flag with one window at a time
// (export's default, or --concurrency 1) is refused; sync reads two by default, so it takes the
// flag alone. The order itself is tested on the library (test/exports/parallel-windows.test.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readingFlags } from '../../src/cli/export-flags.ts';
import { runLender } from '../helpers/memory-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

let t: TestSandbox;
let dir: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  t = await startTestSandbox({ seed: 11, scale: 3000 });
  dir = await mkdtemp(join(tmpdir(), 'lender-unordered-'));
  env = t.cliEnv(dir);
});

after(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

const lender = (argv: string[]) => runLender(argv, env);

const lines = (text: string) => text.trimEnd().split('\n').filter((l) => l !== '');
const idOf = (line: string) => (JSON.parse(line) as { public_id: string }).public_id;
const READ = ['--window', 'month', '--limit', '40', '--concurrency', '4'];

describe('--unordered', () => {
  test('the flag is the export option ordered: false, and only goes with --concurrency 2 or more', async () => {
    assert.deepEqual(readingFlags({ concurrency: '4', unordered: true }), { concurrency: 4, ordered: false });
    assert.deepEqual(readingFlags({ concurrency: '4' }), { concurrency: 4 }, 'in order unless asked');
    assert.deepEqual(readingFlags({ unordered: true }, 2), { ordered: false }, 'alone, where two windows are the default (sync)');
    assert.throws(() => readingFlags({ unordered: true }), /--unordered goes with --concurrency 2 or more/);
    for (const argv of [['export', 'D23', '--unordered'], ['sync', '--datasets', 'D23', '--unordered', '--concurrency', '1', '--out', join(dir, 'never')]]) {
      const r = await lender(argv);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, /^lender (export|sync): --unordered goes with --concurrency 2 or more/);
      assert.equal(r.out, '');
    }
  });

  test('export: every row once, the rows of an ordered export; its state is complete, so a rerun brings nothing new', async () => {
    const ordered = await lender(['export', 'D23', ...READ]);
    assert.equal(ordered.code, 0, ordered.err);
    const state = join(dir, 'd23.state.json');
    const unordered = await lender(['export', 'D23', ...READ, '--unordered', '--state', state]);
    assert.equal(unordered.code, 0, unordered.err);
    const want = lines(ordered.out);
    const got = lines(unordered.out);
    assert.ok(want.length > 400, `${want.length} rows: enough for several pages in several windows`);
    assert.equal(new Set(got.map(idOf)).size, got.length, 'each row once');
    assert.deepEqual([...got].sort(), [...want].sort(), 'the same rows');
    const again = await lender(['export', 'D23', ...READ, '--unordered', '--state', state]);
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(lines(again.out), [], 'an incremental run after a complete one: nothing changed, nothing written');
  });

  test('sync: pages committed as they arrive hold every row once, the rows of an ordered export', async () => {
    const out = join(dir, 'sync');
    const r = await lender(['sync', '--datasets', 'D23', '--out', out, ...READ, '--unordered']);
    assert.equal(r.code, 0, r.err);
    const ordered = await lender(['export', 'D23', ...READ]);
    const want = lines(ordered.out);
    const got = lines(await readFile(join(out, 'D23.ndjson'), 'utf8'));
    const summary = JSON.parse(r.out) as { datasets: { D23: { rows: number; windows: number } } };
    assert.equal(summary.datasets.D23.rows, want.length);
    assert.ok(summary.datasets.D23.windows > 4, `${summary.datasets.D23.windows} windows: more than are read at once`);
    assert.deepEqual([...got].sort(), [...want].sort(), 'the same rows, each once');
  });
});
