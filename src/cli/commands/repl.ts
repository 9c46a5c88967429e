// Placeholder until its issue lands; replaced by the real command.
import type { Command } from '../command.ts';

const command: Command = {
  name: 'repl',
  summary: 'not built yet',
  help: 'Usage: lender repl (not built yet)',
  async run(_argv, io) {
    io.stderr.write('lender repl: not built yet\n');
    return 1;
  },
};
export default command;
