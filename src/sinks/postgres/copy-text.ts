// Rows in the text format of COPY ... FROM STDIN (pure): one line per row, fields separated by
// tabs, \N for NULL, and backslash, newline, carriage return and tab escaped with a backslash.
// Everything else goes through as UTF-8, which is what makes COPY the fast way in.
import type { ColumnType } from '../columns.ts';
import { storableJson } from '../json-text.ts';

/** A value PostgreSQL cannot store: a NUL character in text or JSON. */
export class UnstorableValueError extends Error {
  override name = 'UnstorableValueError';
}

const NEEDS_ESCAPE = /[\\\n\r\t]/;
// \u0000 in JSON text: an odd number of backslashes before u0000 (an even number is a literal
// backslash followed by the letters u0000).
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeText(text: string): string {
  if (text.includes('\u0000')) throw new UnstorableValueError('PostgreSQL cannot store the NUL character (\\u0000) in text or JSON');
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\n\r\t]/g, (c) => ESCAPES[c]!) : text;
}

/** One field of a COPY line. The value must fit the column's type (see columns.ts `fits`). */
export function copyField(value: unknown, type: ColumnType): string {
  if (value === null || value === undefined) return '\\N';
  switch (type) {
    case 'boolean':
      return value === true ? 't' : 'f';
    case 'bigint':
    case 'double':
      return String(value);
    case 'timestamptz':
    case 'text':
      return escapeText(String(value));
    case 'json': {
      const json = storableJson(value);
      // JSONB refuses the escape \u0000 as PostgreSQL text refuses the character itself.
      if (ESCAPED_NUL.test(json)) throw new UnstorableValueError('PostgreSQL cannot store the NUL character (\\u0000) in text or JSON');
      return escapeText(json);
    }
  }
}

/** A COPY line of fields (already encoded with copyField), with its newline. */
export function copyLine(fields: readonly string[]): string {
  return `${fields.join('\t')}\n`;
}
