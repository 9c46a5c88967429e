// The client side never imports the sandbox (docs/development.md, layering).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const IMPORTS_SANDBOX = /(?:from\s+|import\s*\(\s*)['"][^'"]*\/sandbox(?:\/[^'"]*)?['"]/;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : name.endsWith('.ts') ? [path] : [];
  });
}

describe('layering', () => {
  it('the pattern sees static and dynamic sandbox imports', () => {
    assert.ok(IMPORTS_SANDBOX.test("import { startSandbox } from '../sandbox/index.ts';"));
    assert.ok(IMPORTS_SANDBOX.test("await import('../../sandbox/index.ts')"));
    assert.ok(!IMPORTS_SANDBOX.test("import { x } from './sandboxed.ts';"));
  });

  it('src/client, src/auth and src/catalog do not import src/sandbox', () => {
    const files = ['src/client', 'src/auth', 'src/catalog'].flatMap(tsFiles);
    assert.ok(files.length >= 10);
    assert.deepEqual(files.filter((f) => IMPORTS_SANDBOX.test(readFileSync(f, 'utf8'))), []);
  });
});
