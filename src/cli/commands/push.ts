// `lender push`: create, update or withdraw accounts from NDJSON or JSON (the accounts endpoint).
import { createAccountWriter } from '../../accounts/account-writer.ts';
import type { Command } from '../command.ts';
import { CONNECTION_HELP } from '../connection-flags.ts';
import { RECORD_OPTIONS_HELP, runRecordCommand, type RecordCommandSpec } from '../read-records.ts';

const HELP = `Usage: lender push [FILE|-] [options]

Creates, updates or withdraws accounts and sub-accounts. Each record is an Account object of the
service (status 1 create, 2 update, 3 withdraw; also "create", "update", "withdraw"). Records are
validated before sending: debtorCompanyId, accountId, subAccountId, firstName, lastName, language
(en|ar), status and principal are required; dates are dd/MM/yyyy (ISO dates are converted);
money is a decimal string (numbers are converted). Records of the same debtorCompanyId,
accountId and subAccountId reach the service in the order they appear.

The input is NDJSON (one record per line) or JSON: an array of records, or {"accounts": [...]}.

Options:
  --strict              also require birthDate, dateDue, phones and loanType (the fields the
                        service's machine-readable schema marks required)
${RECORD_OPTIONS_HELP}

${CONNECTION_HELP}

Examples:
  lender push accounts.ndjson --rejects rejects.ndjson
  lender push portfolio.json --batch-size 1000 --concurrency 4 --progress
  lender push accounts.ndjson --delivery-timeout 10m   # ride out a longer outage
  cat accounts.ndjson | lender push - --sandbox
`;

const spec: RecordCommandSpec = {
  name: 'push',
  strictOption: true,
  createWriter: (api, opts) => createAccountWriter(api, opts),
};

const command: Command = {
  name: 'push',
  summary: 'create, update or withdraw accounts from NDJSON or JSON',
  help: HELP,
  run: (argv, io) => runRecordCommand(spec, argv, io),
};
export default command;
