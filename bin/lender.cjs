#!/usr/bin/env node
// The `lender` command: sizes libuv's thread pool, then starts lender.mjs. CommonJS, because
// loading an ES module already starts the pool (module files are read on it), and libuv reads
// UV_THREADPOOL_SIZE once, as the pool starts. Where Node cannot start itself again (no
// process.execve: Node 20), the commands that move rows run in this process, whose glibc arenas
// cannot be capped (MALLOC_ARENA_MAX is read at start, src/cli/young-generation.ts): each pool
// thread that runs DuckDB's calls keeps an arena of its own. Two threads instead of four held a
// DuckDB sync of 1,000,000 rows some 7 MB lower (docs/cli.md#memory). A size the user gave wins.
'use strict';
if (typeof process.execve !== 'function' && process.env.UV_THREADPOOL_SIZE === undefined) process.env.UV_THREADPOOL_SIZE = '2';
import('./lender.mjs');
