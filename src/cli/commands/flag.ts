// Placeholder until its issue lands; replaced by the real command.
import type { Command } from '../command.ts';

const command: Command = {
  name: 'flag',
  summary: 'not built yet',
  help: 'Usage: lender flag (not built yet)',
  async run(_argv, io) {
    io.stderr.write('lender flag: not built yet\n');
    return 1;
  },
};
export default command;
