// Every notebook runs, cell by cell in order, through the tsx runner (scripts/run-notebook.ts),
// against an embedded sandbox; saved notebooks carry no outputs; and the runner itself fails on a
// failing cell and on a secret in the output. (.ci/run also executes them through real Jupyter
// with the tslab kernel: scripts/ci-notebooks.sh.)
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { codeCells, readNotebook, sourceOf } from '../../scripts/run-notebook.ts';

const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
const DIR = join(ROOT, 'notebooks');
const RUNNER = join(ROOT, 'scripts', 'run-notebook.ts');
const NOTEBOOKS = readdirSync(DIR).filter((n) => n.endsWith('.ipynb')).sort();

function run(path: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', RUNNER, path], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('notebooks', () => {
  it('are the four documented ones', () => {
    assert.deepEqual(NOTEBOOKS, ['01-quick-start.ipynb', '02-incremental-sync.ipynb', '03-push-portfolio.ipynb', '04-payments-analysis.ipynb']);
  });

  for (const name of NOTEBOOKS) {
    describe(name, () => {
      const path = join(DIR, name);

      it('opens with a markdown cell, uses the tslab kernel, and is saved without outputs', () => {
        const nb = readNotebook(path);
        assert.equal(nb.cells[0]?.cell_type, 'markdown');
        assert.match(sourceOf(nb.cells[0]!), /^# .+/);
        assert.equal(nb.metadata?.kernelspec?.name, 'tslab');
        for (const cell of nb.cells.filter((c) => c.cell_type === 'code')) {
          assert.deepEqual(cell.outputs, []);
          assert.equal(cell.execution_count, null);
        }
        const text = readFileSync(path, 'utf8');
        assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]{6,}\./);
        assert.ok(codeCells(nb).length >= 3);
      });

      it('runs every code cell in order through tsx, showing what tslab would', () => {
        const r = run(path);
        assert.equal(r.status, 0, r.output.slice(-4000));
        assert.match(r.output, new RegExp(`${name}: ${codeCells(readNotebook(path)).length} code cells ran`));
        // Every notebook opens a session and shows it as its first cell's value.
        assert.match(r.output, /^LenderSession demo \(/m);
      });
    });
  }
});

describe('the notebook runner', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lender-nb-runner-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const loader = JSON.stringify(join(DIR, 'load-ts.cjs'));
  const session = JSON.stringify(join(ROOT, 'src', 'session.ts'));
  const notebook = (cells: string[]) => ({
    cells: [{ cell_type: 'markdown', source: ['# t'] }, ...cells.map((c) => ({ cell_type: 'code', source: [c], outputs: [], execution_count: null }))],
    metadata: { kernelspec: { name: 'tslab' } },
  });
  const open = `import { loadTs } from ${loader};\nconst { openSession } = await loadTs(${session});\nconst session = await openSession({ sandbox: true });`;

  it('fails and names the cell that threw', () => {
    const path = join(dir, 'failing.ipynb');
    writeFileSync(path, JSON.stringify(notebook(['const a = 1;', 'if (a === 1) throw new Error("cell two broke");'])));
    const r = run(path);
    assert.equal(r.status, 1);
    assert.match(r.output, /code cell 2 failed: Error: cell two broke/);
  });

  it('fails when the output shows the session password', () => {
    const path = join(dir, 'leaky.ipynb');
    writeFileSync(path, JSON.stringify(notebook([open, 'console.log(`pw: ${session.knownSecrets()[0]}`);', 'await session.close();'])));
    const r = run(path);
    assert.equal(r.status, 1, r.output.slice(-2000));
    assert.match(r.output, /the output holds known secret #1/);
  });

  it('passes a clean notebook that prints the session', () => {
    const path = join(dir, 'clean.ipynb');
    writeFileSync(path, JSON.stringify(notebook([open, 'console.log(session, JSON.stringify(session), session.client);', 'await session.close();'])));
    const r = run(path);
    assert.equal(r.status, 0, r.output.slice(-2000));
    assert.match(r.output, /LenderSession demo/);
  });

  it("shows a cell's last expression as tslab does (console.log, nothing for null or undefined)", () => {
    const path = join(dir, 'shows.ipynb');
    writeFileSync(path, JSON.stringify(notebook([
      'const n = 40;\nn + 2 // the answer',
      '`plain ${"text"}`',
      'const nothing = undefined;\nnothing',
      'if (n > 0) { n; }',
      '({ a: 1 })',
    ])));
    const r = run(path);
    assert.equal(r.status, 0, r.output.slice(-2000));
    assert.deepEqual(r.output.split('\n').filter((l) => l !== '' && !/code cells ran/.test(l)), ['42', 'plain text', '{ a: 1 }']);
  });

  it('fails when a shown value (the last expression of a cell) holds the session password', () => {
    const path = join(dir, 'leaky-value.ipynb');
    writeFileSync(path, JSON.stringify(notebook([open, 'session.knownSecrets()', 'await session.close();'])));
    const r = run(path);
    assert.equal(r.status, 1, r.output.slice(-2000));
    assert.match(r.output, /the output holds known secret #1/);
  });
});
