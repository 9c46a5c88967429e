// Executes the notebooks through real Jupyter with the tslab kernel, and either stores their
// outputs in them (--write: what a code host shows) or checks them (--check, the default):
//
//   node --import tsx scripts/notebooks.ts --write [NOTEBOOK.ipynb…]   regenerate the stored outputs
//   node --import tsx scripts/notebooks.ts --check [NOTEBOOK.ipynb…]   execute, compare, scan
//
// Each notebook runs on an embedded sandbox with its default seed, so a regeneration gives the
// same outputs (but for what depends on today's date, such as the months a count walks through).
// A run fails on an error in any cell (or anything on stderr), and on an output that holds a secret: every notebook opens
// `session`, and two extra cells (never stored), after the one that opens it and last, hand its
// password and tokens to this process through private files, for the scan. --check also fails when an executed cell's outputs are
// not of the kinds stored (text, an HTML table, an SVG chart), so stored outputs never go stale in
// kind. Jupyter (python3 -m jupyter nbconvert) and tslab must be installed: scripts/ci-notebooks.sh
// installs them (tslab under $TSLAB_PREFIX, default $TMPDIR/lender-streams-tslab).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { findLeaks } from '../src/session/secrets.ts';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
export const NOTEBOOK_DIR = join(ROOT, 'notebooks');
const PYTHON = process.env.LENDER_JUPYTER_PYTHON ?? '/usr/bin/python3';
const SECRETS_CELL_ID = 'lender-secrets-probe';

export interface Output {
  output_type: string;
  name?: string;
  text?: string | string[];
  data?: Record<string, string | string[]>;
  [key: string]: unknown;
}

export interface Cell {
  cell_type: string;
  id?: string;
  source: string | string[];
  metadata?: Record<string, unknown>;
  outputs?: Output[];
  execution_count?: number | null;
}

export interface Notebook {
  cells: Cell[];
  metadata: Record<string, unknown>;
  nbformat: number;
  nbformat_minor: number;
}

export function readNotebook(path: string): Notebook {
  return JSON.parse(readFileSync(path, 'utf8')) as Notebook;
}

/** The notebook as Jupyter stores it (keys sorted, one-space indent, a newline at the end), so
 * saving it again from Jupyter changes nothing. */
export function notebookText(nb: Notebook): string {
  const sorted = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sorted);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]));
  };
  return `${JSON.stringify(sorted(nb), null, 1)}\n`;
}

export function notebookPaths(): string[] {
  return readdirSync(NOTEBOOK_DIR).filter((n) => n.endsWith('.ipynb')).sort().map((n) => join(NOTEBOOK_DIR, n));
}

/** What kinds of output a cell has, in order: 'stream', or the media types of a display. */
export function outputKinds(cell: Cell): string[] {
  return (cell.outputs ?? []).map((o) => (o.data === undefined ? o.output_type : Object.keys(o.data).sort().join('+')));
}

/** Where scripts/ci-notebooks.sh installs tslab, and its kernel spec beside it. */
function tslabPrefix(): string {
  return process.env.TSLAB_PREFIX ?? join(process.env.TMPDIR ?? tmpdir(), 'lender-streams-tslab');
}

/** The environment Jupyter runs the notebooks in: tslab on PATH, its kernel spec on JUPYTER_PATH. */
function kernelEnv(): NodeJS.ProcessEnv {
  const prefix = tslabPrefix();
  return {
    ...process.env,
    PATH: [join(prefix, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
    JUPYTER_PATH: [join(prefix, 'jupyter', 'share', 'jupyter'), process.env.JUPYTER_PATH ?? ''].filter((p) => p !== '').join(delimiter),
  };
}

/** Jupyter and the tslab kernel can run here; else the sentence saying what to install. */
export function jupyterProblem(): string | undefined {
  const env = kernelEnv();
  const jupyter = spawnSync(PYTHON, ['-c', 'import nbconvert, nbclient, jupyter_client'], { encoding: 'utf8', env });
  if (jupyter.status !== 0) return `Jupyter (nbconvert, nbclient) is not installed for ${PYTHON}; run bash scripts/ci-notebooks.sh --setup`;
  const spec = spawnSync(PYTHON, ['-m', 'jupyter', 'kernelspec', 'list'], { encoding: 'utf8', env });
  if (!/^\s*tslab\s/m.test(spec.stdout ?? '')) return 'the Jupyter kernel tslab is not installed; run bash scripts/ci-notebooks.sh --setup';
  const tslab = spawnSync('tslab', ['--version'], { encoding: 'utf8', env });
  if (tslab.status !== 0) return 'the tslab command is not on PATH nor under $TSLAB_PREFIX; run bash scripts/ci-notebooks.sh --setup';
  return undefined;
}

export interface Execution {
  /** The executed notebook without the secrets probe, as it would be stored. */
  notebook: Notebook;
  /** Problems found: a failed cell, a secret in an output. Empty when it ran clean. */
  problems: string[];
}

/** Executes a notebook through Jupyter and tslab, in the notebooks' folder (the kernel's working directory). */
export function execute(path: string): Execution {
  const name = basename(path);
  const work = mkdtempSync(join(tmpdir(), 'lender-notebook-'));
  chmodSync(work, 0o700);
  // The copy sits beside the original: the notebooks load the library relative to their folder.
  const copy = join(NOTEBOOK_DIR, `.run-${process.pid}-${name}`);
  try {
    const nb = readNotebook(path);
    // Right after the cell that opens the session (the cells after a failed one do not run), and last.
    const probe = (n: number): Cell => ({
      cell_type: 'code', id: `${SECRETS_CELL_ID}-${n}`, metadata: {}, execution_count: null, outputs: [],
      source: [`require('node:fs').writeFileSync(${JSON.stringify(join(work, `secrets-${n}.json`))}, JSON.stringify([...session.knownSecrets()]), { mode: 0o600 });`],
    });
    const opening = nb.cells.findIndex((c) => c.cell_type === 'code' && /\bsession\s*=\s*await\s+openSession\(/.test(textOf(c.source)));
    if (opening >= 0) nb.cells.splice(opening + 1, 0, probe(1));
    nb.cells.push(probe(2));
    writeFileSync(copy, notebookText(nb));
    const run = spawnSync(PYTHON, [
      '-m', 'jupyter', 'nbconvert', '--to', 'notebook', '--execute',
      '--ExecutePreprocessor.kernel_name=tslab', '--ExecutePreprocessor.timeout=300',
      // Every cell runs, so the scan sees every output; a failed cell is found by its output below.
      '--allow-errors',
      // Timings in the cells' metadata would change at every run.
      '--ExecutePreprocessor.record_timing=False',
      '--output-dir', work, '--output', name, copy,
    ], { encoding: 'utf8', env: { ...kernelEnv(), PYDEVD_DISABLE_FILE_VALIDATION: '1' }, timeout: 600_000 });
    const problems: string[] = [];
    const executedPath = join(work, name);
    if (run.status !== 0 || !existsSync(executedPath)) {
      const log = (run.stderr ?? '').split('\n').filter((l) => !/Debugger|frozen|PYDEVD|^0\.00s/.test(l)).slice(-30).join('\n');
      return { notebook: readNotebook(path), problems: [`${name}: Jupyter could not execute it:\n${log}`] };
    }
    const executed = readNotebook(executedPath);
    const secrets = [1, 2].flatMap((n) => {
      const file = join(work, `secrets-${n}.json`);
      return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as string[]) : [];
    });
    if (secrets.length === 0) problems.push(`${name}: no session secrets were collected, so the scan would prove nothing`);
    executed.cells = executed.cells.filter((c) => !c.id?.startsWith(SECRETS_CELL_ID));
    executed.cells.forEach((cell, i) => {
      for (const out of cell.outputs ?? []) {
        // tslab prints a cell's error on stderr (the notebooks write nothing else there).
        if (out.output_type === 'error') problems.push(`${name}: cell ${i + 1} failed: ${String(out.ename)}: ${String(out.evalue)}`);
        if (out.output_type === 'stream' && out.name === 'stderr') {
          const lines = textOf(out.text).split('\n');
          problems.push(`${name}: cell ${i + 1} failed or wrote to stderr: ${lines.find((l) => /^\w*Error\b/.test(l)) ?? lines[0]}`);
        }
        const leaks = findLeaks(JSON.stringify(out), secrets);
        if (leaks.length > 0) problems.push(`${name}: the output of cell ${i + 1} holds ${leaks.join(', ')}`);
      }
    });
    return { notebook: executed, problems };
  } finally {
    rmSync(copy, { force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

function textOf(text: string | readonly string[] | undefined): string {
  if (text === undefined) return '';
  return typeof text === 'string' ? text : text.join('');
}

/** Differences in kind between the stored outputs and those of an execution, one line each. */
export function kindDifferences(stored: Notebook, executed: Notebook): string[] {
  const out: string[] = [];
  if (stored.cells.length !== executed.cells.length) return [`${stored.cells.length} cells stored, ${executed.cells.length} executed`];
  stored.cells.forEach((cell, i) => {
    const want = outputKinds(cell).join(', ');
    const got = outputKinds(executed.cells[i]!).join(', ');
    if (want !== got) out.push(`cell ${i + 1}: stored [${want}], executed [${got}]`);
  });
  return out;
}

function main(argv: string[]): number {
  const write = argv.includes('--write');
  const given = argv.filter((a) => !a.startsWith('--'));
  const paths = given.length > 0 ? given.map((p) => resolve(p)) : notebookPaths();
  const problem = jupyterProblem();
  if (problem !== undefined) {
    process.stderr.write(`notebooks: ${problem}\n`);
    return 1;
  }
  let failed = false;
  for (const path of paths) {
    const name = basename(path);
    const { notebook, problems } = execute(path);
    if (!write) problems.push(...kindDifferences(readNotebook(path), notebook).map((d) => `${name}: ${d} (regenerate: node --import tsx scripts/notebooks.ts --write)`));
    if (problems.length > 0) {
      failed = true;
      for (const p of problems) process.stderr.write(`FAIL ${p}\n`);
      continue;
    }
    if (write) writeFileSync(path, notebookText(notebook));
    process.stdout.write(`ok   ${name}${write ? ' (outputs stored)' : ''}\n`);
  }
  return failed ? 1 : 0;
}

const invoked = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname);
if (invoked) process.exitCode = main(process.argv.slice(2));
