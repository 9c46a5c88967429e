// `lender demo` (also `npm start`): the whole product on an embedded sandbox, ending with a
// summary on stdout. Progress goes to stderr so stdout holds only the summary.
import { EXIT, UsageError, type Command } from '../command.ts';
import { integerFlag, parseCommandArgs } from '../args.ts';
import { DEFAULT_PORTFOLIO_SIZE } from '../../demo/portfolio.ts';
import { DEFAULT_SEED } from '../../sandbox/options.ts';

export const OPTIONS = {
  out: { type: 'string' },
  records: { type: 'string' },
} as const;

const HELP = `Usage: lender demo [--out DIR] [--records N]

Runs the whole product on an embedded sandbox (seed ${DEFAULT_SEED}, lender demo), no
credentials needed:
  1. pushes a sample portfolio through the account writer; the deliberately invalid records
     are rejected before sending and written to DIR/rejects.ndjson
  2. flags one debtor do-not-contact and one account disputed
  3. waits for the sandbox to process everything, then syncs every available dataset into the
     DuckDB file DIR/lender.duckdb, a table per dataset (d07 for D07), with a progress bar per
     dataset on stderr
  4. prints a summary on stdout: rows per dataset, rejected records by reason, the payments by
     month and status asked of the database in SQL (the query is shown, to run yourself), and
     the time taken

Running it again with the same DIR is an incremental sync (the state is in the database, in its
_lender_state table): the sandbox starts with the same seed, the portfolio is pushed again with
fresh timestamps, and only the changed rows are fetched; each row stays in its table once, in its
latest version. The database is held from the start: while another process has it open (another
demo, a DuckDB session on it), the demo is refused before anything in DIR is written.

Options:
  --out DIR      folder of the database and the rejects (default ./out)
  --records N    records in the sample portfolio, 20 or more (default ${DEFAULT_PORTFOLIO_SIZE})
  -h, --help     this text

Exit codes: 0 done (rejected sample records are expected), 1 failure, 2 usage error,
130 interrupted.
`;

const command: Command = {
  name: 'demo',
  summary: 'the whole product on an embedded sandbox',
  help: HELP,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, OPTIONS);
    if (values.out === '') throw new UsageError('--out needs a folder');
    const records = integerFlag(values.records, '--records', { max: 1_000_000 });
    if (records !== undefined && records < 20) throw new UsageError(`--records must be at least 20, not ${records}`);
    // Loaded on run so `lender demo --help` stays instant.
    const { runDemo } = await import('../../demo/run.ts');
    const { formatSummary } = await import('../../demo/summary.ts');
    const result = await runDemo({
      out: values.out ?? 'out',
      seed: DEFAULT_SEED,
      progress: io.stderr,
      signal: io.signal,
      ...(records !== undefined && { records }),
    });
    io.stdout.write(formatSummary(result));
    return EXIT.ok;
  },
};
export default command;
