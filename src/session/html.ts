// Tables as HTML, for notebooks: the same cells as the text tables (cut to the same width, the
// same "… N more rows"), every cell and heading escaped, so a value holding markup shows as text.
import { emptyTableNote, tableCells, type TableOptions } from './table.ts';

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe to put in HTML, as element content or as an attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** An HTML table of the rows (all fields, or the ones named); numbers aligned right. */
export function htmlTable(rows: readonly object[], fields?: readonly string[], opts?: TableOptions): string {
  const { columns, rows: cells, numeric, more } = tableCells(rows, fields, opts);
  const empty = emptyTableNote(rows, columns);
  if (empty !== undefined) return `<p>${escapeHtml(empty)}</p>`;
  const cell = (tag: 'th' | 'td', text: string, i: number) =>
    `<${tag}${numeric[i] ? ' style="text-align:right"' : ''}>${escapeHtml(text)}</${tag}>`;
  const out = ['<table>', `<thead><tr>${columns.map((c, i) => cell('th', c, i)).join('')}</tr></thead>`, '<tbody>'];
  for (const r of cells) out.push(`<tr>${r.map((v, i) => cell('td', v, i)).join('')}</tr>`);
  out.push('</tbody>', '</table>');
  if (more > 0) out.push(`<p>… ${more} more rows</p>`);
  return out.join('\n');
}
