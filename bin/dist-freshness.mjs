// Whether dist/ was compiled from exactly the sources present. The build records each source
// file's size and modification time, taken before compiling (an edit made during the build
// leaves dist/ stale, never current); at start the bin compares them, a few milliseconds for a
// checkout's couple of hundred files. Any difference (a file edited, added, removed, or checked
// out anew) and dist/ is not used.
//
//   node bin/dist-freshness.mjs build    compile dist/ (tsc -p tsconfig.build.json) and record the sources
//   node bin/dist-freshness.mjs prepare  the same on `npm ci`, but never failing the install: without
//                                        typescript (--omit=dev) or with a type error nothing is
//                                        recorded, and the bin runs the sources
// Only built-in modules Node has loaded for itself at the top: this module is on the path of every
// start of the bin.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = new URL('../', import.meta.url);
/** What the compiled output depends on: the folders tsconfig.build.json compiles, and its settings. */
const SOURCE_DIRS = ['src/', 'repl/'];
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json'];
const STAMP = new URL('dist/.sources.json', ROOT);

/** path -> [size, mtimeMs] of every source file. */
export function sourceSnapshot() {
  const files = {};
  const record = (path) => {
    const stat = statSync(new URL(path, ROOT));
    files[path] = [stat.size, stat.mtimeMs];
  };
  for (const dir of SOURCE_DIRS) {
    let names;
    try {
      names = readdirSync(new URL(dir, ROOT), { recursive: true });
    } catch {
      continue;
    }
    for (const name of names) if (name.endsWith('.ts')) record(`${dir}${name.split('\\').join('/')}`);
  }
  for (const path of SETTINGS) record(path);
  return files;
}

/** True when dist/ holds a build of the sources as they are now. */
export function distIsCurrent() {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8')).files;
  } catch {
    return false;
  }
  const now = sourceSnapshot();
  const paths = Object.keys(now);
  if (paths.length !== Object.keys(stamp).length) return false;
  return paths.every((path) => stamp[path]?.[0] === now[path][0] && stamp[path]?.[1] === now[path][1]);
}

/** Compiles dist/ and records the sources it was compiled from; the exit code of tsc. */
async function build({ lenient }) {
  const { spawnSync } = await import('node:child_process');
  const { createRequire } = await import('node:module');
  const { fileURLToPath } = await import('node:url');
  const before = sourceSnapshot();
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch (error) {
    if (!lenient) throw error;
    process.stderr.write('lender: typescript is not installed, dist/ is not built; `lender` runs the sources.\n');
    return 0;
  }
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: fileURLToPath(ROOT), stdio: 'inherit' });
  if (result.status !== 0) {
    if (!lenient) return result.status ?? 1;
    process.stderr.write('lender: the build failed (above), dist/ is not current; `lender` runs the sources.\n');
    return 0;
  }
  writeFileSync(STAMP, JSON.stringify({ files: before }) + '\n');
  return 0;
}

// pathToFileURL: a checkout path may hold characters (#, ?, %) that a hand-made URL would misread.
const command = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href ? process.argv[2] : undefined;
if (command === 'build' || command === 'prepare') process.exitCode = await build({ lenient: command === 'prepare' });
