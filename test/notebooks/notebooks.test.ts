// The notebooks: each one is stored with the outputs of a real execution (HTML tables and SVG
// charts where its cells show them, what a code host displays), holds no secret, and executes
// through real Jupyter with the tslab kernel to outputs of the same kinds (scripts/notebooks.ts,
// also how they are regenerated). Each also runs cell by cell through the tsx runner
// (scripts/run-notebook.ts), where tables and charts are text. The Jupyter scan and the runner
// each fail on a secret in an output.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { codeCells, readNotebook, sourceOf } from '../../scripts/run-notebook.ts';
import { execute, jupyterProblem, kindDifferences, notebookText, outputKinds, readNotebook as readStored, type Notebook } from '../../scripts/notebooks.ts';
import { findLeaks } from '../../src/session/secrets.ts';

const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
const DIR = join(ROOT, 'notebooks');
const RUNNER = join(ROOT, 'scripts', 'run-notebook.ts');
// Hidden files are the copies an execution runs (scripts/notebooks.ts), perhaps another suite's.
const NOTEBOOKS = readdirSync(DIR).filter((n) => n.endsWith('.ipynb') && !n.startsWith('.')).sort();

/** Runs the notebook through the tsx runner with a temporary folder of its own (TMPDIR), and
 * lists what of ours the notebook left there (its folders of rows, of records, of a database). */
function run(path: string): { status: number | null; output: string; leftInTmp: string[] } {
  const tmp = mkdtempSync(join(tmpdir(), 'lender-nb-tmp-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', RUNNER, path], {
      cwd: ROOT, encoding: 'utf8', timeout: 180_000, env: { ...process.env, TMPDIR: tmp },
    });
    // tsx keeps a cache there too: only our own names count.
    return { status: r.status, output: `${r.stdout}${r.stderr}`, leftInTmp: readdirSync(tmp).filter((n) => n.startsWith('lender-')) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

describe('notebooks', () => {
  it('are the five documented ones', () => {
    assert.deepEqual(NOTEBOOKS, ['01-quick-start.ipynb', '02-incremental-sync.ipynb', '03-push-portfolio.ipynb', '04-payments-analysis.ipynb', '05-duckdb-sql.ipynb']);
  });

  it('Jupyter and the tslab kernel are installed (bash scripts/ci-notebooks.sh --setup)', () => {
    assert.equal(jupyterProblem(), undefined);
  });

  for (const name of NOTEBOOKS) {
    describe(name, () => {
      const path = join(DIR, name);

      it('opens with a markdown cell, uses the tslab kernel, and is stored as Jupyter writes it', () => {
        const nb = readNotebook(path);
        assert.equal(nb.cells[0]?.cell_type, 'markdown');
        assert.match(sourceOf(nb.cells[0]!), /^# .+/);
        assert.equal(nb.metadata?.kernelspec?.name, 'tslab');
        assert.ok(codeCells(nb).length >= 3);
        const text = readFileSync(path, 'utf8');
        assert.equal(text, notebookText(JSON.parse(text) as Notebook));
      });

      it('is stored with the outputs a code host shows: HTML for tables, SVG for charts, nothing secret', () => {
        const nb = readStored(path);
        const text = readFileSync(path, 'utf8');
        assert.deepEqual(findLeaks(text), []);
        let shown = 0;
        for (const cell of nb.cells.filter((c) => c.cell_type === 'code')) {
          const source = sourceOf(cell);
          const kinds = outputKinds(cell);
          assert.ok(!kinds.includes('error'), source);
          assert.ok(!(cell.outputs ?? []).some((o) => o.name === 'stderr'), `stderr in the output of: ${source}`);
          const last = source.trim().split('\n').at(-1)!;
          // A cell that ends in table()/chart() shows what they draw; describe() and sql() show a table wherever they are.
          if (/^session\.table\(/.test(last)) assert.deepEqual(kinds, ['text/html'], source);
          if (/^await session\.chart\(|^\}\)$/.test(last) && /await session\.chart\(/.test(source)) assert.deepEqual(kinds, ['image/svg+xml'], source);
          const tables = (source.match(/session\.(describe|sql)\(/g) ?? []).length;
          if (tables > 0) assert.equal(kinds.filter((k) => k === 'text/html').length, tables, source);
          for (const out of cell.outputs ?? []) {
            const svg = out.data?.['image/svg+xml'];
            if (svg === undefined) continue;
            const markup = Array.isArray(svg) ? svg.join('') : svg;
            assert.match(markup, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
            assert.ok(markup.length < 40_000, `an SVG of ${markup.length} bytes`);
          }
          shown += kinds.filter((k) => k === 'text/html' || k === 'image/svg+xml').length;
        }
        assert.ok(shown > 0, 'no table or chart is shown');
        if (/0[45]-/.test(name)) assert.ok(nb.cells.some((c) => outputKinds(c).includes('image/svg+xml')), 'no chart is shown');
      });

      it('executes through Jupyter and tslab, clean, to outputs of the kinds stored', () => {
        const { notebook, problems } = execute(path);
        assert.deepEqual(problems, []);
        assert.deepEqual(kindDifferences(readStored(path), notebook), []);
      });

      it('runs every code cell in order through tsx, showing what tslab would, and leaves no folder behind', () => {
        const r = run(path);
        assert.equal(r.status, 0, r.output.slice(-4000));
        assert.match(r.output, new RegExp(`${name}: ${codeCells(readNotebook(path)).length} code cells ran`));
        // Every notebook opens a session and shows it as its first cell's value.
        assert.match(r.output, /^LenderSession demo \(/m);
        // The rows and records a notebook writes are removed by its last cell.
        assert.deepEqual(r.leftInTmp, []);
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
    writeFileSync(path, JSON.stringify(notebook([open, 'session.knownSecrets()[0]', 'await session.close();'])));
    const r = run(path);
    assert.equal(r.status, 1, r.output.slice(-2000));
    assert.match(r.output, /the output holds known secret #1/);
  });
});

describe('the Jupyter check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lender-nb-jupyter-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const loader = JSON.stringify(join(DIR, 'load-ts.cjs'));
  const session = JSON.stringify(join(ROOT, 'src', 'session.ts'));
  const code = (id: string, source: string) => ({ cell_type: 'code', id, metadata: {}, execution_count: null, outputs: [], source: [source] });

  it('fails on a session secret in an HTML table, in printed text, and on a failing cell, naming the cells', () => {
    const path = join(dir, 'leaky.ipynb');
    writeFileSync(path, notebookText({
      cells: [
        { cell_type: 'markdown', id: 'm', metadata: {}, source: ['# t'] },
        code('open', `import { loadTs } from ${loader};\nconst { openSession } = await loadTs(${session});\nconst session = await openSession({ sandbox: true });`),
        code('html', 'session.table([{ shown: session.knownSecrets()[0] }])'),
        code('clean', "session.table([{ shown: 'nothing secret' }])"),
        code('text', 'console.log(session.knownSecrets()[0])'),
        // Before the failing cell: tslab runs no cell after one that failed, and the kernel is
        // then killed, which would leave the sandbox's CA folder behind.
        code('close', 'await session.close();'),
        code('fails', "throw new Error('this cell broke')"),
      ],
      metadata: { kernelspec: { display_name: 'TypeScript', language: 'typescript', name: 'tslab' } },
      nbformat: 4,
      nbformat_minor: 5,
    }));
    const { problems } = execute(path);
    const text = problems.join('\n');
    assert.match(text, /leaky\.ipynb: the output of cell 3 holds known secret #1/);
    assert.match(text, /leaky\.ipynb: the output of cell 5 holds known secret #1/);
    assert.doesNotMatch(text, /cell 4 holds/);
    assert.match(text, /leaky\.ipynb: cell 7 failed or wrote to stderr: Error: this cell broke/);
    assert.equal(problems.length, 3, text);
  });
});
