// The library version, read once from package.json so it never drifts from the published one.
// Every `lender` start loads this module, even `--version`: fs through process.getBuiltinModule,
// because an ESM import of node:fs costs about 2 ms on Node 24 when nothing else needs it yet.
const { readFileSync } = process.getBuiltinModule('node:fs');

/** The package's manifest, two folders up from src/core/ (a checkout) or three from dist/src/core/ (a build). */
const MANIFESTS = ['../../package.json', '../../../package.json'];

function readVersion(): string {
  // Read directly rather than resolved by the package's name: resolution costs a few
  // milliseconds of every `lender` start.
  for (const relative of MANIFESTS) {
    let pkg: { name?: unknown; version?: unknown };
    try {
      pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as typeof pkg;
    } catch {
      continue;
    }
    if (pkg.name === 'lender-streams' && typeof pkg.version === 'string') return pkg.version;
  }
  return '0.0.0';
}

/** The version of lender-streams in use. */
export const version: string = readVersion();

/** Names the library and runtime so the service's operators can tell our traffic apart. */
export const userAgent = `lender-streams/${version} node/${process.versions.node}`;
