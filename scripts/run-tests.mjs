#!/usr/bin/env node
// Runs every test/**/*.test.ts through node:test with tsx (or the test files given), after
// scripts/test-setup.sh for the whole suite. A script rather than a glob in
// package.json because Node 20's --test does not expand globs and does not look for .ts files.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  const found = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...collect(path));
    else if (name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : collect('test');
if (files.length === 0) {
  console.error('no test files found under test/');
  process.exit(1);
}
// The whole suite drives PostgreSQL and Jupyter for real: what is missing is installed first (or
// named, when it cannot be), so a fresh machine runs it with this one command. Where the setup
// fails, the suite still runs (the tests that need what is missing fail), and the exit code is 1.
let setupFailed = false;
if (only.length === 0) {
  setupFailed = spawnSync('bash', ['scripts/test-setup.sh'], { stdio: 'inherit' }).status !== 0;
  if (setupFailed) console.error('test setup failed (above); running the tests anyway');
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status === 0 && setupFailed ? 1 : (result.status ?? 1));
