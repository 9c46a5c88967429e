// A child process for the lock tests: takes the lock of the state file argv[2] through the
// library, prints `held <pid>` and then, as argv[3] says, waits until it is signalled ('wait') or
// ends with process.exit(0) without releasing the lock ('exit').
import { fileState } from '../../src/exports/state.ts';

const [statePath, then] = process.argv.slice(2);
await fileState(statePath!).lock();
process.stdout.write(`held ${process.pid}\n`);
if (then === 'exit') process.exit(0);
setInterval(() => undefined, 60_000);
