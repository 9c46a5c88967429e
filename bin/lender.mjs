#!/usr/bin/env node
// An installed package has only dist/ and runs the compiled CLI (fast start). A development
// checkout has src/ and runs the sources through tsx, so an edit is never hidden by a stale dist/.
import { existsSync } from 'node:fs';

const sources = new URL('../src/cli/main.ts', import.meta.url);
let cli;
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(sources.href);
} else {
  cli = await import(new URL('../dist/cli/main.js', import.meta.url).href);
}
await cli.runFromProcess();
