// The demo's closing report on stdout: what was pushed and rejected (by reason), the flags, rows
// per dataset, the answer to a question about the payments with the SQL that asked it, the time
// taken, and what to try next. Plain text with fixed columns so it reads well in a terminal and
// can be checked line by line (test/demo/demo.test.ts parses it).
import { existsSync, readdirSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DemoPayments, DemoResult } from './run.ts';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const counted = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : `./${rel}`;
}

/** Notebooks next to the package (a repository checkout); an installed package has none. */
function notebooks(): string[] {
  const dir = fileURLToPath(new URL('../../notebooks/', import.meta.url));
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => name.endsWith('.ipynb')).sort().map((name) => `notebooks/${name}`);
}

export function formatSummary(r: DemoResult): string {
  const lines: string[] = [];
  const incremental = r.datasets.some((d) => d.mode === 'incremental');
  lines.push(`lender demo: done in ${seconds(r.timings.total)} on an embedded sandbox (${r.authUrl}, lender demo)`);
  lines.push('');

  lines.push(`Pushed ${r.push.records} account records: ${r.push.accepted} accepted, ${r.push.rejected} rejected ` +
    `(${counted(r.push.batches, 'batch', 'batches')}, ${counted(r.push.retries, 'retry', 'retries')})`);
  if (r.rejectReasons.length > 0) {
    lines.push(`Rejected records by reason (each one is a line in ${shown(r.rejectsFile)}):`);
    const width = Math.max(...r.rejectReasons.map((x) => String(x.count).length));
    for (const { reason, count } of r.rejectReasons) lines.push(`  ${String(count).padStart(width)}  ${reason}`);
  }
  lines.push(`Flagged do-not-contact: debtor ${r.flags.doNotContact.debtorCompanyId} (all ${r.flags.doNotContact.accounts} of its accounts); ` +
    `disputed: account ${r.flags.disputed.accountId} (${r.flags.accepted} of 2 flags accepted)`);
  lines.push('');

  lines.push(`${incremental ? 'Incremental sync' : 'Initial sync'} of ${r.datasets.length} datasets into ${shown(r.database)} ` +
    '(a table per dataset, the state in its _lender_state table):');
  const nameWidth = Math.max(4, ...r.datasets.map((d) => d.name.length));
  const header = `  ${'code'.padEnd(5)} ${'name'.padEnd(nameWidth)}  ${'load'.padEnd(11)} ${'fetched'.padStart(8)} ${'in table'.padStart(9)} ${'pages'.padStart(6)}`;
  lines.push(header);
  let fetched = 0;
  let inTable = 0;
  for (const d of r.datasets) {
    fetched += d.fetched;
    inTable += d.inTable;
    lines.push(`  ${d.code.padEnd(5)} ${d.name.padEnd(nameWidth)}  ${d.mode.padEnd(11)} ${String(d.fetched).padStart(8)} ${String(d.inTable).padStart(9)} ${String(d.pages).padStart(6)}`);
  }
  lines.push(`  ${'total'.padEnd(5)} ${''.padEnd(nameWidth)}  ${''.padEnd(11)} ${String(fetched).padStart(8)} ${String(inTable).padStart(9)}`);
  lines.push(incremental
    ? '  "fetched" is what changed since the last run; each row is in its table (d07 for D07) once, in its latest version.'
    : '  "fetched" rows went into the table of their dataset (d07 for D07); run the demo again for an incremental sync.');
  for (const n of r.notices.filter((x) => x.kind === 'type-changed' || x.kind === 'no-column')) lines.push(`  note: ${n.message}`);
  lines.push('');

  lines.push(...paymentsReport(r.payments, shown(r.database)));
  lines.push('');

  const t = r.timings;
  lines.push(`Time: ${seconds(t.total)} (sandbox start ${seconds(t.sandbox)}, push ${seconds(t.push)}, flags ${seconds(t.flags)}, ` +
    `processing ${seconds(t.drain)}, sync ${seconds(t.sync)})`);
  lines.push('');

  lines.push('Next:');
  const next = (command: string, what: string) => lines.push(`  ${command.padEnd(27)} ${what}`);
  // `npm start` is the README's own command, into ./out; another folder needs naming again.
  const again = relative(process.cwd(), r.out) === 'out' ? 'npm start' : `npx lender demo --out ${shown(r.out)}`;
  next(again, 'run the demo again: an incremental sync fetches only what changed');
  next(`duckdb ${shown(r.database)}`, 'the tables in the DuckDB CLI, if you have it: SELECT * FROM d07 LIMIT 5;');
  next('npx lender repl --sandbox', "a logged-in REPL: await rows('D07', { limit: 5 }), .datasets");
  next('npx lender sandbox', 'the sandbox on its own, for curl or your own scripts');
  const books = notebooks();
  if (books.length > 0) {
    next('notebooks', `${books[0]}${books.length > 1 ? ` and ${books.length - 1} more` : ''} (Jupyter with the tslab kernel)`);
  }
  return lines.join('\n') + '\n';
}

/** The payments question: its answer as an aligned table, then the SQL that asked it. */
function paymentsReport(p: DemoPayments, database: string): string[] {
  const lines = ['Payments by month and status (D07, the last three months of data), asked in SQL:'];
  if (p.rows.length === 0) {
    lines.push('  (no payments)');
  } else {
    const table = [['month', 'status', 'payments', 'amount'], ...p.rows.map((x) => [x.month, x.status, String(x.payments), String(x.amount)])];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    // Text left, numbers right.
    for (const row of table) lines.push(`  ${row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')}`);
  }
  lines.push(`The query, to run on ${database} yourself:`);
  for (const line of p.sql.split('\n')) lines.push(`  ${line}`);
  return lines;
}
