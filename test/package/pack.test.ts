// The published package, as a user gets it: `npm pack` (which builds dist/ through the prepack
// script), install the tarball into a scratch project, then (a) a plain ESM script starts the
// embedded sandbox from `lender-streams/sandbox`, logs in and exports a few rows, (b) a TypeScript
// consumer type-checks against the installed .d.ts, (c) the installed `lender` binary runs the
// compiled CLI and REPL, (d) the install holds no dev-only package and no install-time script.
// One pack and one install serve all four.
//
// The pack happens in a copy of the package sources, so a build never writes dist/ into the
// checkout other tests and engineers are using.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { runProcess, type ProcessResult } from '../helpers/run-process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  name: string; version: string; devDependencies: Record<string, string>;
};

function exec(command: string, args: string[], cwd: string, timeoutMs = 240_000): Promise<ProcessResult> {
  // npm run-script variables of the outer `npm test` would describe this repository's package,
  // not the scratch project; drop them, keep everything else (registry, cache, proxy settings).
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_package_') && !k.startsWith('npm_lifecycle_')));
  return runProcess(command, args, { cwd, env, timeoutMs });
}

function ok(r: ProcessResult, what: string): ProcessResult {
  // Compiler errors first: in a failed `npm pack` they are buried in npm's own output.
  const tsErrors = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => /error TS\d+/.test(l)).slice(0, 20).join('\n');
  assert.equal(r.code, 0, `${what} failed (exit ${r.code}):\n${tsErrors}\n${r.stdout.slice(-1500)}\n${r.stderr.slice(-3000)}`);
  return r;
}

const APP_MJS = `
import { startSandbox } from 'lender-streams/sandbox';
import { LenderClient, exportRows, version, DatasetUnavailableError } from 'lender-streams';
import { openSession } from 'lender-streams/session';

const sandbox = await startSandbox({ seed: 7, scale: 60 });
try {
  const client = await LenderClient.login(sandbox.credentials('demo'));
  const rows = [];
  for await (const row of exportRows(client, 'D07', { limit: 4 })) {
    rows.push(row);
    if (rows.length === 5) break;
  }
  let unavailable = '';
  try {
    await client.fetchPage('D04');
  } catch (error) {
    unavailable = error instanceof DatasetUnavailableError ? error.constructor.name : String(error);
  }
  await client.close();
  console.log(JSON.stringify({
    version,
    rows: rows.length,
    ids: rows.map((r) => r.public_id),
    statuses: rows.map((r) => r.payment_status),
    unavailable,
    openSession: typeof openSession,
  }));
} finally {
  await sandbox.close();
}
`;

const APP_TS = `
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import {
  LenderClient, LenderError, ValidationError, createAccountWriter, exportRows, exportPages, fileState, sync, toNdjson,
  type Catalog, type ExportRow, type WriterSummary,
} from 'lender-streams';
import { startSandbox, type Sandbox } from 'lender-streams/sandbox';
import { openSession } from 'lender-streams/session';

export async function run(): Promise<number> {
  const sandbox: Sandbox = await startSandbox({ seed: 1, scale: 10 });
  const client: LenderClient = await LenderClient.login(sandbox.credentials('demo'));
  const catalog: Catalog = await client.catalog();
  const codes: string[] = catalog.sections.flatMap((s) => s.datasets.filter((d) => d.available).map((d) => d.code));
  const rows: ExportRow[] = [];
  for await (const row of exportRows(client, 'D07', { since: '2025-01-01T00:00:00Z', window: 'month' })) rows.push(row as ExportRow);
  for await (const page of exportPages(client, 'D23', { window: 'month' })) void page.rows.length;
  await pipeline(exportRows(client, 'D01'), toNdjson(), new Writable({ write(_c, _e, cb) { cb(); } }));
  await sync(client, ['D01', 'D07'], { out: 'data', state: fileState('data/.state.json') });
  const writer = createAccountWriter(client, { batchSize: 100 });
  writer.end();
  const summary: WriterSummary = writer.summary;
  const session = await openSession({ sandbox: true });
  await session.close();
  // @ts-expect-error: the types are real, not any; a number is not a login.
  await LenderClient.login(42);
  const failure: unknown = new Error('x');
  if (failure instanceof ValidationError || failure instanceof LenderError) return 1;
  await client.close();
  await sandbox.close();
  return rows.length + codes.length + summary.received;
}
`;

describe('the npm package', { timeout: 600_000 }, () => {
  let work: string;
  let app: string;
  let tarball: string;
  let packedFiles: string[];

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'lender-pack-'));
    const source = join(work, 'pkg');
    await mkdir(source);
    // Everything but installed and generated folders: `files` in package.json decides what is
    // packed, so the copy need not guess which sources the build reads.
    for (const entry of await readdir(ROOT)) {
      if (['node_modules', 'dist', 'out', '.git'].includes(entry) || entry.endsWith('.tgz')) continue;
      await cp(join(ROOT, entry), join(source, entry), { recursive: true });
    }
    // The build needs the dev dependencies (typescript, @types); they are already installed here.
    await symlink(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
    const packed = ok(await exec('npm', ['pack', '--json', '--pack-destination', work], source), 'npm pack');
    const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, info[0]!.filename);
    packedFiles = info[0]!.files.map((f) => f.path).sort();

    app = join(work, 'app');
    await mkdir(app);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true, type: 'module' }, null, 2));
    ok(await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], app), 'npm install of the tarball');
  });

  after(async () => {
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  it('packs the compiled library, its types, the bin and the README, and no sources or tests', () => {
    for (const file of [
      'package.json', 'README.md', 'bin/lender.cjs', 'bin/lender.mjs', 'dist/src/index.js', 'dist/src/index.d.ts',
      'dist/src/sandbox/index.js', 'dist/src/sandbox/index.d.ts', 'dist/src/session.js', 'dist/src/session.d.ts',
      'dist/src/cli/main.js', 'dist/repl/start.js',
    ]) {
      assert.ok(packedFiles.includes(file), `the tarball holds ${file}`);
    }
    assert.deepEqual(packedFiles.filter((f) => /^(src|test|bench|notebooks|scripts)\//.test(f) || f.endsWith('.ts') && !f.endsWith('.d.ts')), []);
  });

  it('works from plain ESM: starts the embedded sandbox, logs in and exports rows', async () => {
    await writeFile(join(app, 'app.mjs'), APP_MJS);
    const r = ok(await exec(process.execPath, ['app.mjs'], app, 60_000), 'node app.mjs');
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
      version: string; rows: number; ids: unknown[]; statuses: unknown[]; unavailable: string; openSession: string;
    };
    assert.equal(out.version, pkg.version);
    assert.equal(out.rows, 5);
    assert.equal(new Set(out.ids).size, 5, 'five distinct rows');
    for (const id of out.ids) assert.equal(typeof id, 'string');
    for (const s of out.statuses) assert.ok(['SUCCESS', 'PENDING', 'FAILED'].includes(s as string), String(s));
    assert.equal(out.unavailable, 'DatasetUnavailableError');
    assert.equal(out.openSession, 'function');
  });

  it('type-checks a TypeScript consumer against the installed declarations', async () => {
    await writeFile(join(app, 'app.ts'), APP_TS);
    await writeFile(join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true,
        // Declarations are checked too: a broken or dangling type in the package fails here.
        skipLibCheck: false,
        // @types/node comes from this repository; everything else must come with the package.
        typeRoots: [join(ROOT, 'node_modules', '@types')], types: ['node'],
      },
      files: ['app.ts'],
    }, null, 2));
    ok(await exec(process.execPath, [TSC, '-p', 'tsconfig.json'], app), 'tsc --noEmit in the scratch project');
    // The check has teeth: a misuse of the API is reported.
    await writeFile(join(app, 'bad.ts'), `import { exportRows } from 'lender-streams';\nexportRows('not a client', 'D07');\n`);
    await writeFile(join(app, 'tsconfig.bad.json'), JSON.stringify({ extends: './tsconfig.json', files: ['bad.ts'] }));
    const bad = await exec(process.execPath, [TSC, '-p', 'tsconfig.bad.json'], app);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stdout, /bad\.ts\(2,/);
  });

  it('installs the lender binary, which runs the compiled CLI', async () => {
    const bin = join(app, 'node_modules', '.bin', 'lender');
    const version = ok(await exec(bin, ['--version'], app, 30_000), 'lender --version');
    assert.equal(version.stdout, `${pkg.version}\n`);
    const help = ok(await exec(bin, ['catalog', '--help'], app, 30_000), 'lender catalog --help');
    assert.match(help.stdout, /^Usage: lender catalog/);
    // stdin is /dev/null: the REPL (dist/repl/) starts, connects to the sandbox and ends at EOF.
    const repl = ok(await exec(bin, ['repl', '--sandbox', '--scale', '10'], app, 60_000), 'lender repl --sandbox');
    assert.match(repl.stdout, /lender> /);
    // No TypeScript sources and no tsx in the install: the bin can only have used dist/.
    const installed = JSON.parse(await readFile(join(app, 'node_modules', pkg.name, 'package.json'), 'utf8')) as { version: string };
    assert.equal(installed.version, pkg.version);
  });

  it('installs no dev-only package (tsx, esbuild, typescript, ...) and runs no script on install', async () => {
    const modules = join(app, 'node_modules');
    assert.ok(existsSync(join(modules, 'luxon')), 'the runtime dependencies are installed');
    for (const name of ['tsx', 'esbuild', '@esbuild', ...Object.keys(pkg.devDependencies)]) {
      assert.ok(!existsSync(join(modules, name)), `${name} is installed with the package`);
    }
    const manifest = JSON.parse(await readFile(join(modules, pkg.name, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>; dependencies?: Record<string, string>;
    };
    for (const script of ['prepare', 'preinstall', 'install', 'postinstall']) {
      assert.equal(manifest.scripts?.[script], undefined, `the published manifest has a ${script} script`);
    }
    assert.equal(manifest.dependencies?.tsx, undefined);
  });
});
