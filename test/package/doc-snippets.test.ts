// Every TypeScript block of the README and the guides type-checks, strictly, against the sources
// the package is built from: a snippet a user copies compiles as shown. Each block is a module of
// its own; the names a block uses without making them (the client, the user's credentials, their
// own upsert) are declared for it, unless it makes them itself.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { runProcess } from '../helpers/run-process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const PAGES = ['README.md', 'docs/library.md', 'docs/sinks.md', 'docs/sandbox.md', 'docs/resilience.md', 'docs/repl-and-notebooks.md'];

/** What the snippets take as given, declared only where a snippet does not make it. */
const GIVEN: Record<string, string> = {
  client: "declare const client: import('lender-streams').LenderClient;",
  email: 'declare const email: string;',
  password: 'declare const password: string;',
  upsert: 'declare function upsert(row: unknown): void;',
};

function makes(code: string, name: string): boolean {
  return new RegExp(`\\b(?:const|let|var|function|class)\\s+${name}\\b|\\bimport\\b[^;]*\\b${name}\\b[^;]*\\bfrom\\b`).test(code);
}

test('every ts block of the README and the guides compiles as shown', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lender-doc-snippets-'));
  try {
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
    // The sink example sinks.md imports, where a user would keep it.
    const example = await readFile(join(ROOT, 'examples', 'memory-sink.ts'), 'utf8');
    await writeFile(join(dir, 'memory-sink.ts'), example.replace("from '../src/index.ts'", "from 'lender-streams'"));
    const blocks: { file: string; from: string }[] = [];
    for (const page of PAGES) {
      const text = await readFile(join(ROOT, page), 'utf8');
      let index = 0;
      for (const match of text.matchAll(/^```ts\n([\s\S]*?)^```/gm)) {
        index += 1;
        const code = match[1]!;
        const line = text.slice(0, match.index).split('\n').length + 1;
        const given = Object.entries(GIVEN).filter(([name]) => new RegExp(`\\b${name}\\b`).test(code) && !makes(code, name)).map(([, d]) => d);
        const file = `${page.replace(/[/.]/g, '_')}_${index}.ts`;
        await writeFile(join(dir, file), `${given.join(' ')} export {};\n${code}`);
        blocks.push({ file, from: `${page}:${line}` });
      }
    }
    assert.ok(blocks.length >= 15, `found ${blocks.length} blocks`);
    const src = (path: string) => [join(ROOT, path)];
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: {
        // Snippets show a call and leave its result unused.
        noUnusedLocals: false,
        paths: { 'lender-streams': src('src/index.ts'), 'lender-streams/sandbox': src('src/sandbox/index.ts'), 'lender-streams/session': src('src/session.ts') },
      },
      include: ['*.ts'],
    }));
    const run = await runProcess(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { cwd: dir, timeoutMs: 240_000 });
    // Errors name the block's place in its page, not the scratch file.
    const said = blocks.reduce((out, b) => out.split(b.file).join(b.from), `${run.stdout}${run.stderr}`);
    assert.equal(said.trim(), '', 'the snippets do not compile');
    assert.equal(run.code, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
