// bin/lender.mjs in a checkout of its own: it runs dist/ only while dist/ was built from exactly
// the sources present, and the sources (through tsx) as soon as one was edited, added or removed,
// so a stale build never runs. The checkout is a folder with the real bin/ and stand-in entry
// points that say which of them ran.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let dir: string;

const entry = (which: string) => `export async function runFromProcess() { process.stdout.write(${JSON.stringify(which)}); }\n`;

/** Which entry point `lender` ran: 'dist', 'src', or the error it printed. */
function started(): string {
  const out = spawnSync(process.execPath, [join(dir, 'bin', 'lender.mjs'), '--version'], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout : `exit ${out.status}: ${out.stderr.trim()}`;
}

/** The build's record of the sources, as `npm run build` writes it after compiling. */
function recordSources(): void {
  spawnSync(process.execPath, ['--input-type=module', '-e', `
    import { writeFileSync } from 'node:fs';
    import { sourceSnapshot } from ${JSON.stringify(join(dir, 'bin', 'dist-freshness.mjs'))};
    writeFileSync(${JSON.stringify(join(dir, 'dist', '.sources.json'))}, JSON.stringify(sourceSnapshot()));
  `], { stdio: 'inherit' });
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lender-bin-'));
  cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(ROOT, f), join(dir, f));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
  mkdirSync(join(dir, 'src', 'core'), { recursive: true });
  writeFileSync(join(dir, 'src', 'cli', 'main.ts'), entry('src'));
  writeFileSync(join(dir, 'src', 'core', 'util.ts'), 'export const one: number = 1;\n');
  mkdirSync(join(dir, 'dist', 'src', 'cli'), { recursive: true });
  writeFileSync(join(dir, 'dist', 'src', 'cli', 'main.js'), entry('dist'));
});
after(async () => rm(dir, { recursive: true, force: true }));

test('without a record of its sources, dist/ is not run', () => {
  assert.equal(started(), 'src');
});

test('a build of the sources present runs; an edit, a new file or a removed one runs the sources', () => {
  recordSources();
  assert.equal(started(), 'dist');

  // Same size, another time: an edit that kept the length.
  const util = join(dir, 'src', 'core', 'util.ts');
  const later = new Date(Date.now() + 5_000);
  utimesSync(util, later, later);
  assert.equal(started(), 'src', 'edited');
  recordSources();
  assert.equal(started(), 'dist');

  writeFileSync(join(dir, 'src', 'core', 'extra.ts'), 'export {};\n');
  assert.equal(started(), 'src', 'a file added');
  recordSources();
  assert.equal(started(), 'dist');

  rmSync(join(dir, 'src', 'core', 'extra.ts'));
  assert.equal(started(), 'src', 'a file removed');
  recordSources();

  // The compiler's settings shape the output too.
  writeFileSync(join(dir, 'tsconfig.build.json'), '{ "extends": "./tsconfig.json" }\n');
  assert.equal(started(), 'src', 'settings changed');
});

test('an installed package (no src/) runs dist/', () => {
  rmSync(join(dir, 'src'), { recursive: true, force: true });
  assert.equal(started(), 'dist');
});

test('a clone never installed (no dist/, no tsx) says which checkout needs `npm ci`', async () => {
  // As `npm install /path/to/clone` links it: the user's project is elsewhere.
  const clone = await mkdtemp(join(tmpdir(), 'lender-bare-clone-'));
  try {
    cpSync(join(ROOT, 'bin'), join(clone, 'bin'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(clone, 'package.json'));
    mkdirSync(join(clone, 'src', 'cli'), { recursive: true });
    writeFileSync(join(clone, 'src', 'cli', 'main.ts'), entry('src'));
    const out = spawnSync(process.execPath, [join(clone, 'bin', 'lender.mjs'), '--version'], { encoding: 'utf8', cwd: tmpdir() });
    assert.equal(out.status, 1);
    assert.equal(out.stderr, `lender: cannot start: the checkout at ${clone} has neither a build (dist/) nor tsx: run \`npm ci\` there.\n`);
  } finally {
    await rm(clone, { recursive: true, force: true });
  }
});
