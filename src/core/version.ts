// The library version, read once from package.json so it never drifts from the published one.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

function readVersion(): string {
  // By the package's own name: found from src/core/ (checkout) and dist/src/core/ (build) alike.
  const path = createRequire(import.meta.url).resolve('lender-streams/package.json');
  const pkg = JSON.parse(readFileSync(path, 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

/** The version of lender-streams in use. */
export const version: string = readVersion();

/** Names the library and runtime so the service's operators can tell our traffic apart. */
export const userAgent = `lender-streams/${version} node/${process.versions.node}`;
