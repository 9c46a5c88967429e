#!/usr/bin/env node
// An installed package has only dist/ and runs the compiled CLI (fast start). A development
// checkout has src/ and runs the sources through tsx (a dev dependency), so an edit is never
// hidden by a stale dist/.
import { existsSync } from 'node:fs';

const sources = new URL('../src/cli/main.ts', import.meta.url);
const built = new URL('../dist/src/cli/main.js', import.meta.url);

async function loadTsx() {
  try {
    return await import('tsx/esm/api');
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

let cli;
const tsx = existsSync(sources) ? await loadTsx() : undefined;
if (tsx !== undefined) {
  tsx.register();
  cli = await import(sources.href);
} else if (existsSync(built)) {
  if (existsSync(sources)) {
    process.stderr.write('lender: tsx is not installed (run `npm install`); running dist/, which may be older than src/.\n');
  }
  cli = await import(built.href);
} else {
  process.stderr.write(existsSync(sources)
    ? 'lender: cannot start: this checkout has neither tsx (run `npm install`) nor a build (run `npm run build`).\n'
    : 'lender: cannot start: the package has no dist/; reinstall lender-streams.\n');
  process.exit(1);
}
await cli.runFromProcess();
