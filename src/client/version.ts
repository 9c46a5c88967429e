// The library version, read once from package.json so it never drifts from the published one.
import { readFileSync } from 'node:fs';

function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

export const version: string = readVersion();

/** Names the library and runtime so the service's operators can tell our traffic apart. */
export const userAgent = `lender-streams/${version} node/${process.versions.node}`;
