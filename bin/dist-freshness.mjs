// Whether dist/ was compiled from exactly the sources present. The build records each source
// file's size and modification time, and each source folder's modification time, taken before
// compiling (an edit made during the build leaves dist/ stale, never current). At start the bin
// stats those paths, and lists no folder: a file edited changes its own size or time, a file
// added, removed or renamed changes its folder's time. Any difference (including a checkout anew,
// or an editor's swap file beside a source) and dist/ is not used.
//
//   node bin/dist-freshness.mjs build    compile dist/ (tsc -p tsconfig.build.json) and record the sources
//   node bin/dist-freshness.mjs prepare  the same on `npm ci`, but never failing the install: without
//                                        typescript (--omit=dev) or with a type error nothing is
//                                        recorded, and the bin runs the sources
// This module is on the path of every start of the bin, so it takes built-ins through
// process.getBuiltinModule: an ESM import of node:fs builds a facade of all its exports, about
// 2 ms on Node 24 when nothing else needs it.
const { readdirSync, readFileSync, statSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { resolve } = process.getBuiltinModule('node:path');
const { fileURLToPath, pathToFileURL } = process.getBuiltinModule('node:url');

const ROOT = new URL('../', import.meta.url);
const ROOT_PATH = fileURLToPath(ROOT);
/** What the compiled output depends on: the folders tsconfig.build.json compiles, and its settings. */
const SOURCE_DIRS = ['src/', 'repl/'];
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json'];
const STAMP = new URL('dist/.sources.json', ROOT);

/** { files: path -> [size, mtimeMs] of every source file, dirs: path -> mtimeMs of every source folder }. */
export function sourceSnapshot() {
  const files = {};
  const dirs = {};
  for (const dir of SOURCE_DIRS) {
    let names;
    try {
      names = readdirSync(ROOT_PATH + dir, { recursive: true });
    } catch {
      continue;
    }
    dirs[dir] = statSync(ROOT_PATH + dir).mtimeMs;
    for (const name of names) {
      const path = `${dir}${name.split('\\').join('/')}`;
      const stat = statSync(ROOT_PATH + path);
      if (stat.isDirectory()) dirs[`${path}/`] = stat.mtimeMs;
      else if (path.endsWith('.ts')) files[path] = [stat.size, stat.mtimeMs];
    }
  }
  for (const path of SETTINGS) {
    const stat = statSync(ROOT_PATH + path);
    files[path] = [stat.size, stat.mtimeMs];
  }
  return { files, dirs };
}

/** True when dist/ holds a build of the sources as they are now. */
export function distIsCurrent() {
  try {
    return matches(JSON.parse(readFileSync(STAMP, 'utf8')));
  } catch {
    return false; // no record, or not one this bin wrote
  }
}

function matches(stamp) {
  const same = (path, size, mtimeMs) => {
    const stat = statSync(ROOT_PATH + path, { throwIfNoEntry: false });
    return stat !== undefined && stat.mtimeMs === mtimeMs && (size === undefined || stat.size === size);
  };
  // A source folder that now exists but was not recorded (src/ or repl/ created since) fails here too.
  for (const dir of SOURCE_DIRS) if (stamp.dirs[dir] === undefined && statSync(ROOT_PATH + dir, { throwIfNoEntry: false }) !== undefined) return false;
  for (const [dir, mtimeMs] of Object.entries(stamp.dirs)) if (!same(dir, undefined, mtimeMs)) return false;
  for (const [path, [size, mtimeMs]] of Object.entries(stamp.files)) if (!same(path, size, mtimeMs)) return false;
  return true;
}

/** Compiles dist/ and records the sources it was compiled from; the exit code of tsc. */
async function build({ lenient }) {
  const { spawnSync } = await import('node:child_process');
  const { createRequire } = await import('node:module');
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
  writeFileSync(STAMP, JSON.stringify(before) + '\n');
  return 0;
}

// pathToFileURL: a checkout path may hold characters (#, ?, %) that a hand-made URL would misread.
const command = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href ? process.argv[2] : undefined;
if (command === 'build' || command === 'prepare') process.exitCode = await build({ lenient: command === 'prepare' });
