// Generated from a notebook by scripts/run-notebook.ts; deleted after the run.
(globalThis as any).__lenderNotebookCell = 1;
// tslab compiles cells to CommonJS; load-ts.cjs imports the library's TypeScript sources through tsx.
import { loadTs } from './load-ts.cjs';
const { openSession } = await loadTs('../src/session.ts');
const session = await openSession({ sandbox: true });
session
;
(globalThis as any).__lenderNotebookCell = 2;
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const outDir = mkdtempSync(join(tmpdir(), 'lender-sync-'));
const stateFile = join(outDir, 'state.json');
const idsIn = (code: string): string[] =>
  readFileSync(join(outDir, `${code}.ndjson`), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l).public_id);
`NDJSON files and the state go to ${outDir}`
;
(globalThis as any).__lenderNotebookCell = 3;
const initial = await session.sync(['D07', 'D23'], { out: outDir, state: stateFile });
assert.equal(initial.datasets.D07.mode, 'initial');
initial
;
(globalThis as any).__lenderNotebookCell = 4;
const checkpoint = JSON.parse(readFileSync(stateFile, 'utf8'));
session.table(Object.values(checkpoint.datasets).map((d: any) => ({
  dataset: d.dataset, highWater: d.highWater?.value, idsAtHighWater: d.highWater?.ids?.length ?? 0, completedAt: d.completedAt,
})))
;
(globalThis as any).__lenderNotebookCell = 5;
const changed = session.sandbox.advance();
changed
;
(globalThis as any).__lenderNotebookCell = 6;
const incremental = await session.sync(['D07', 'D23'], { out: outDir, state: stateFile });
assert.equal(incremental.datasets.D07.mode, 'incremental');
assert.ok(incremental.datasets.D07.rows + incremental.datasets.D23.rows < initial.datasets.D07.rows + initial.datasets.D23.rows);
incremental
;
(globalThis as any).__lenderNotebookCell = 7;
const stop = new AbortController();
let pagesBeforeStop = 0;
let interrupted = false;
try {
  await session.sync(['D03'], {
    out: outDir, state: stateFile, limit: 100, signal: stop.signal,
    onStream: (stream: any) => stream.on('page', (page: any) => { if (page.rows > 0 && ++pagesBeforeStop === 3) stop.abort(); }),
  });
} catch (error: any) {
  interrupted = error?.name === 'AbortError' || stop.signal.aborted;
}
assert.ok(interrupted, 'the load should have been stopped');
assert.ok(idsIn('D03').length > 0);
`stopped after ${pagesBeforeStop} pages, ${idsIn('D03').length} rows on disk`
;
(globalThis as any).__lenderNotebookCell = 8;
const resumed = await session.sync(['D03'], { out: outDir, state: stateFile, limit: 100 });
assert.equal(resumed.datasets.D03.mode, 'resumed');
assert.ok(resumed.datasets.D03.rows < (await session.count('D03')).total!);
const d03 = idsIn('D03');
const d03Total = await session.count('D03');
assert.equal(new Set(d03).size, d03Total.total);
({ resumed: resumed.datasets.D03.rows, linesOnDisk: d03.length, distinctIds: new Set(d03).size, total: d03Total.total })
;
(globalThis as any).__lenderNotebookCell = 9;
await session.close();
;
(globalThis as any).__lenderNotebookSecrets.push(...session.knownSecrets());
