#!/usr/bin/env node
// Runs the compiled CLI when the package has been built (installed copies), else the TypeScript
// sources through tsx (a development checkout).
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
let cli;
if (existsSync(compiled)) {
  cli = await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
await cli.runFromProcess();
