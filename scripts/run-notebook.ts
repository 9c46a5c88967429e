// Runs every code cell of a notebook, in order, as one ES module through tsx, the way `npm test`
// checks that the notebooks also work without Jupyter (scripts/notebooks.ts runs them in Jupyter):
//
//   node --import tsx scripts/run-notebook.ts notebooks/01-quick-start.ipynb
//
// The cells are concatenated into a temporary .mts module (an ES module wherever it sits) next
// to the notebook, so relative imports resolve as in the kernel, whose working directory is the
// notebook's folder, and imported with top-level await. A cell whose last statement is an
// expression shows its value the way tslab does (console.log, unless null or undefined). Without a
// kernel, table() and chart() give their text forms, so the output scanned here is the text a
// notebook would hold, tables and charts as text. Exit 0 when every cell ran; 1 with the
// failing cell's number otherwise, or when the output holds a secret of the notebook's session
// (its password, or a JWT-looking string).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { findLeaks } from '../src/session/secrets.ts';

interface Cell {
  cell_type: string;
  source: string | string[];
  outputs?: unknown[];
  execution_count?: number | null;
}

export interface Notebook {
  cells: Cell[];
  metadata?: { kernelspec?: { name?: string } };
}

export function readNotebook(path: string): Notebook {
  return JSON.parse(readFileSync(path, 'utf8')) as Notebook;
}

export function sourceOf(cell: Cell): string {
  return Array.isArray(cell.source) ? cell.source.join('') : cell.source;
}

export function codeCells(nb: Notebook): string[] {
  return nb.cells.filter((c) => c.cell_type === 'code').map(sourceOf);
}

const SECRETS = '__lenderNotebookSecrets';
const CELL = '__lenderNotebookCell';
const SHOW = '__lenderNotebookShow';

/** The cell with its last statement, when that is an expression, handed to SHOW (tslab shows the
 * value of a cell's last expression statement with console.log, unless it is null or undefined). */
export function showLastExpression(code: string): string {
  const file = ts.createSourceFile('cell.ts', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const last = file.statements.at(-1);
  if (last === undefined || !ts.isExpressionStatement(last)) return code;
  const expression = last.expression;
  return `${code.slice(0, expression.getStart(file))}(globalThis as any).${SHOW}((${expression.getText(file)}));${code.slice(last.getEnd())}`;
}

/** The module text: cells in order, each preceded by a marker naming it, then an epilogue that
 * hands the sessions' secret values to this process (never printed) for the output scan. */
export function notebookModule(nb: Notebook): string {
  const cells = codeCells(nb);
  const parts = cells.map((code, i) => `(globalThis as any).${CELL} = ${i + 1};\n${showLastExpression(code)}\n;`);
  const sessions = new Set<string>();
  for (const code of cells) {
    for (const m of code.matchAll(/\b(?:const|let)\s+(\w+)\s*=\s*await\s+openSession\(/g)) sessions.add(m[1]!);
  }
  const epilogue = [...sessions]
    .map((name) => `(globalThis as any).${SECRETS}.push(...${name}.knownSecrets());`)
    .join('\n');
  return `// Generated from a notebook by scripts/run-notebook.ts; deleted after the run.\n${parts.join('\n')}\n${epilogue}\n`;
}

async function main(): Promise<number> {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: node --import tsx scripts/run-notebook.ts NOTEBOOK.ipynb\n');
    return 2;
  }
  const path = resolve(file);
  const nb = readNotebook(path);
  const dir = dirname(path);
  const temp = resolve(dir, `.run-${basename(path, '.ipynb')}-${process.pid}.mts`);
  writeFileSync(temp, notebookModule(nb));

  let captured = '';
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      captured += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }

  const g = globalThis as Record<string, unknown>;
  g[SECRETS] = [];
  g[CELL] = 0;
  g[SHOW] = (value: unknown) => {
    if (value !== null && value !== undefined) console.log(value);
  };
  process.chdir(dir);
  try {
    await import(pathToFileURL(temp).href);
  } catch (error) {
    const cell = Number(g[CELL]);
    process.stderr.write(`${basename(path)}: code cell ${cell} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  } finally {
    rmSync(temp, { force: true });
  }
  const leaks = findLeaks(captured, g[SECRETS] as string[]);
  if (leaks.length > 0) {
    process.stderr.write(`${basename(path)}: the output holds ${leaks.join(', ')}\n`);
    return 1;
  }
  process.stderr.write(`${basename(path)}: ${codeCells(nb).length} code cells ran\n`);
  return 0;
}

const invoked = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname);
if (invoked) process.exitCode = await main();
