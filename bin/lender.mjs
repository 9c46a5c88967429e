#!/usr/bin/env node
// Starts the compiled CLI when dist/ was built from the sources present (npm ci builds it; an
// installed package has only dist/), else the sources through tsx (a dev dependency), so an
// edit is never hidden by a stale dist/ and a current one starts about as fast as Node itself.
// Built-ins through process.getBuiltinModule, as in dist-freshness.mjs: cheaper than an ESM import.
const { existsSync } = process.getBuiltinModule('node:fs');
import { distIsCurrent } from './dist-freshness.mjs';

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

function fail(message) {
  process.stderr.write(`lender: cannot start: ${message}\n`);
  process.exit(1);
}

let cli;
if (!existsSync(sources)) {
  if (!existsSync(built)) fail('the package has no dist/; reinstall lender-streams.');
  cli = await import(built.href);
} else if (existsSync(built) && distIsCurrent()) {
  cli = await import(built.href);
} else {
  const tsx = await loadTsx();
  if (tsx === undefined) {
    // Named by its folder: installed from a clone, the checkout is not the user's project.
    const root = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
    fail(existsSync(built)
      ? `the checkout at ${root} has a dist/ built from other sources and no tsx: run \`npm ci\` there.`
      : `the checkout at ${root} has neither a build (dist/) nor tsx: run \`npm ci\` there.`);
  }
  tsx.register();
  cli = await import(sources.href);
}
await cli.runFromProcess();
