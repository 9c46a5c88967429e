// Import directions (docs/development.md, layering): every import between the parts of src/ goes
// down the layers, src/core at the bottom importing nothing; the client side never imports the
// sandbox, nor the sandbox the client side; repl/ sits above src/, and src/ reaches it only
// through the `lender repl` command's lazy import.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const IMPORTS_SANDBOX = /(?:from\s+|import\s*\(\s*)['"][^'"]*\/sandbox(?:\/[^'"]*)?['"]/;
// Static (`from '…'`, `import '…'`) and lazy (`import('…')`) module specifiers.
const SPECIFIER = /(?:\bfrom\s+|\bimport\s+|\bimport\s*\(\s*)['"]([^'"]+)['"]/g;
// The one place in src/ allowed to reach repl/, and only lazily, so no library entry loads it.
const REPL_LOADER = 'src/cli/commands/repl.ts';

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : name.endsWith('.ts') ? [path] : [];
  });
}

interface Import { from: string; to: string; lazy: boolean }

/** Relative imports of a source, resolved to paths from the repository root. */
function importsIn(source: string, file: string): Import[] {
  return [...source.matchAll(SPECIFIER)].filter((m) => m[1]!.startsWith('.')).map((m) => ({
    from: relative(ROOT, file).split(sep).join('/'),
    to: relative(ROOT, resolve(dirname(file), m[1]!)).split(sep).join('/'),
    lazy: m[0].includes('('),
  }));
}

const importsOf = (files: string[]): Import[] => files.flatMap((f) => importsIn(readFileSync(f, 'utf8'), f));

/** A folder of src/ or a file directly in it: the unit the layers are drawn between. */
function partOf(path: string): string {
  return path.split('/')[1]!;
}

// Each part imports only parts of a lower layer. core is the bottom: errors, types, the
// ServiceApi seam, retry, transport, response parsing and the static catalog.
const LAYER: Record<string, number> = {
  core: 0, 'prng.ts': 0,
  auth: 1, exports: 1, accounts: 1,
  sinks: 2,
  client: 3, sandbox: 3,
  'connect.ts': 4, 'progress.ts': 4,
  session: 5, demo: 5,
  'session.ts': 6,
  cli: 7, 'index.ts': 7,
};
const CLIENT_SIDE = ['core', 'auth', 'exports', 'accounts', 'sinks', 'client'];
const under = (folder: string) => (i: Import): boolean => i.to.startsWith(`${folder}/`);

describe('layering', () => {
  it('the patterns see static and dynamic imports', () => {
    assert.ok(IMPORTS_SANDBOX.test("import { startSandbox } from '../sandbox/index.ts';"));
    assert.ok(IMPORTS_SANDBOX.test("await import('../../sandbox/index.ts')"));
    assert.ok(!IMPORTS_SANDBOX.test("import { x } from './sandboxed.ts';"));
    const file = join(ROOT, 'src', 'cli', 'commands', 'x.ts');
    const found = importsIn("import type { A } from '../../a.ts';\nimport './b.ts';\nawait import('../../../repl/start.ts');", file);
    assert.deepEqual(found.map((i) => [i.to, i.lazy]), [['src/a.ts', false], ['src/cli/commands/b.ts', false], ['repl/start.ts', true]]);
  });

  it('every import between the parts of src/ goes down the layers', () => {
    const imports = importsOf(tsFiles(join(ROOT, 'src'))).filter((i) => i.to.startsWith('src/'));
    const wrong = imports.filter((i) => {
      const [from, to] = [partOf(i.from), partOf(i.to)];
      return from !== to && !(LAYER[from]! > LAYER[to]!);
    });
    assert.ok(imports.length > 200);
    assert.deepEqual(wrong.map((i) => `${i.from} -> ${i.to}`), []);
    assert.deepEqual(Object.keys(LAYER).sort(), [...new Set(tsFiles(join(ROOT, 'src')).map((f) => partOf(relative(ROOT, f).split(sep).join('/'))))].sort(),
      'every part of src/ has a layer');
  });

  it('src/core imports nothing from the rest of src/', () => {
    const imports = importsOf(tsFiles(join(ROOT, 'src', 'core')));
    assert.ok(imports.length > 10);
    assert.deepEqual(imports.filter((i) => !under('src/core')(i)).map((i) => `${i.from} -> ${i.to}`), []);
  });

  it('the client side never imports src/sandbox, and the sandbox only src/core and the seeded PRNG', () => {
    const files = CLIENT_SIDE.map((d) => join(ROOT, 'src', d)).flatMap(tsFiles);
    assert.ok(files.length >= 30);
    assert.deepEqual(files.filter((f) => IMPORTS_SANDBOX.test(readFileSync(f, 'utf8'))), []);
    const fromSandbox = importsOf(tsFiles(join(ROOT, 'src', 'sandbox'))).filter((i) => !under('src/sandbox')(i));
    assert.deepEqual(fromSandbox.filter((i) => !under('src/core')(i) && i.to !== 'src/prng.ts').map((i) => `${i.from} -> ${i.to}`), []);
  });

  it(`src/ imports nothing from repl/ but for the lazy import() in ${REPL_LOADER}`, () => {
    const toRepl = importsOf(tsFiles(join(ROOT, 'src'))).filter(under('repl'));
    assert.deepEqual(toRepl.filter((i) => i.from !== REPL_LOADER || !i.lazy), []);
    assert.ok(toRepl.length > 0, `${REPL_LOADER} loads the REPL from repl/`);
  });

  it('repl/ builds on src/ and never on the CLI that loads it', () => {
    const imports = importsOf(tsFiles(join(ROOT, 'repl')));
    assert.ok(imports.some(under('src')));
    assert.deepEqual(imports.filter((i) => !under('src')(i) && !under('repl')(i)), []);
    assert.deepEqual(imports.filter(under('src/cli')), []);
  });
});
