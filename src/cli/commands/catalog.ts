// `lender catalog [--json]`: the live catalog, sections and datasets with availability.
import { datasetInfo } from '../../core/catalog.ts';
import type { Catalog } from '../../core/types.ts';
import { parseCommandArgs } from '../args.ts';
import { EXIT, type Command } from '../command.ts';
import { CONNECTION_HELP, CONNECTION_OPTIONS, connectWithFlags } from '../connection-flags.ts';

const help = `Usage: lender catalog [--json] [connection options]

List the export sections and datasets with their availability, as the service reports them
now (a dataset listed as not available cannot be fetched yet).

Options:
  --json                print the catalog body as JSON instead of a table
  -h, --help            this text

${CONNECTION_HELP}
`;

/** A plain-text table: one header line per section, one line per dataset. */
export function formatCatalog(catalog: Catalog): string {
  const datasets = catalog.sections.flatMap((s) => s.datasets);
  const nameWidth = Math.max(4, ...datasets.map((d) => d.name.length));
  const fieldWidth = Math.max(6, ...datasets.map((d) => d.cursorField.length));
  const lines: string[] = [];
  for (const section of catalog.sections) {
    lines.push(`${section.code}  ${section.name}`);
    for (const d of section.datasets) {
      const kind = datasetInfo(d.code)?.pathKind ?? '?';
      const availability = d.available ? 'available' : 'not available';
      lines.push(`  ${d.code.padEnd(4)} ${d.name.padEnd(nameWidth)}  ${d.cursorField.padEnd(fieldWidth)}  ${kind.padEnd(6)}  ${availability}`);
    }
  }
  const available = datasets.filter((d) => d.available).length;
  lines.push('', `${available} of ${datasets.length} datasets available (schema ${catalog.schemaVersion}).`);
  return lines.join('\n') + '\n';
}

const command: Command = {
  name: 'catalog',
  summary: 'list sections and datasets with availability',
  help,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, { ...CONNECTION_OPTIONS, json: { type: 'boolean' } });
    const connection = await connectWithFlags(values, io);
    try {
      const catalog = await connection.client.catalog({ signal: io.signal });
      io.stdout.write(values.json ? `${JSON.stringify(catalog, null, 2)}\n` : formatCatalog(catalog));
      return EXIT.ok;
    } finally {
      await connection.close();
    }
  },
};
export default command;
