// `lender flag`: set Disputed / Do Not Contact on accounts from NDJSON or JSON (the status-update
// endpoint).
import { createFlagWriter } from '../../accounts/flags.ts';
import type { Command } from '../command.ts';
import { CONNECTION_HELP } from '../connection-flags.ts';
import { RECORD_OPTIONS_HELP, runRecordCommand, type RecordCommandSpec } from '../read-records.ts';

const HELP = `Usage: lender flag [FILE|-] [options]

Sets operational flags on accounts. Each record is {"status", "debtorCompanyId", "accountId"}
with status 5 (or "disputed") to flag the account Disputed, or 6 (or "doNotContact") to flag the
customer Do Not Contact, which covers every account of that debtorCompanyId. The sandbox refuses
a flag for an account it does not know (the service's documentation does not say what it does).

The input is NDJSON (one record per line) or JSON: an array of records, or {"accounts": [...]}.

${RECORD_OPTIONS_HELP}

${CONNECTION_HELP}

Examples:
  lender flag flags.ndjson --rejects flag-rejects.ndjson
  lender flag flags.ndjson --delivery-timeout 30s --max-attempts 3
  echo '{"status":"doNotContact","debtorCompanyId":"C-1","accountId":"A-1"}' | lender flag
`;

const spec: RecordCommandSpec = {
  name: 'flag',
  strictOption: false,
  createWriter: (api, opts) => createFlagWriter(api, opts),
};

const command: Command = {
  name: 'flag',
  summary: 'set disputed / do-not-contact flags on accounts',
  help: HELP,
  run: (argv, io) => runRecordCommand(spec, argv, io),
};
export default command;
