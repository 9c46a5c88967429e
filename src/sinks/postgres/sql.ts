// SQL text for the PostgreSQL sink (pure): quoted names, the column types, and the statements
// that create the tables and merge a staged page into its table.
import { randomBytes } from 'node:crypto';
import { MISMATCH_COLUMN, unnameable, type Column, type ColumnNaming, type ColumnType } from '../columns.ts';

/** An identifier in double quotes, so any field name (mixed case, spaces, keywords) is a column. */
export function ident(name: string): string {
  if (name.includes('\u0000')) throw new Error('an identifier cannot hold a NUL character');
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * `text` as a dollar-quoted literal: taken as it is whatever the server's settings, with a tag that
 * first appears where it closes the literal (not inside the text, nor formed by its end: 'a$lender').
 */
export function dollarQuoted(text: string): string {
  if (text.includes('\u0000')) throw new Error('a literal cannot hold a NUL character');
  let tag = '$lender$';
  while (`${text}${tag}`.indexOf(tag) !== text.length) tag = `$lender_${randomBytes(4).toString('hex')}$`;
  return `${tag}${text}${tag}`;
}

/** A name as a person would type it in SQL: bare when it is a plain lower-case name and not a
 * reserved word, else quoted. */
export function sqlName(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) && !RESERVED.has(name) ? name : ident(name);
}

/** schema.table as a person would type it (messages, the summary's location); statements use `qualified`. */
export function shownName(schema: string, table: string): string {
  return `${sqlName(schema)}.${sqlName(table)}`;
}

export function qualified(schema: string, table: string): string {
  return `${ident(schema)}.${ident(table)}`;
}

// PostgreSQL's reserved key words (those that cannot name a table or schema unquoted).
const RESERVED = new Set(('all analyse analyze and any array as asc asymmetric authorization binary both case cast check ' +
  'collate collation column concurrently constraint create cross current_catalog current_date current_role current_schema ' +
  'current_time current_timestamp current_user default deferrable desc distinct do else end except false fetch for foreign ' +
  'freeze from full grant group having ilike in initially inner intersect into is isnull join lateral leading left like limit ' +
  'localtime localtimestamp natural not notnull null offset on only or order outer overlaps placing primary references ' +
  'returning right select session_user similar some symmetric system_user table tablesample then to trailing true union ' +
  'unique user using variadic verbose when where window with').split(' '));

const SQL_TYPE: Record<ColumnType, string> = {
  bigint: 'BIGINT',
  double: 'DOUBLE PRECISION',
  boolean: 'BOOLEAN',
  timestamptz: 'TIMESTAMPTZ',
  text: 'TEXT',
  json: 'JSONB',
};

export function sqlType(type: ColumnType): string {
  return SQL_TYPE[type];
}

/**
 * The column type of an existing column, from its PostgreSQL type (format_type). Columns made by
 * this sink map back exactly; a column someone changed by hand gets the nearest type, so values
 * that do not fit it go to `_mismatched` rather than failing the load.
 */
export function columnTypeOf(pgType: string): ColumnType {
  const t = pgType.toLowerCase();
  if (t === 'bigint' || t === 'integer' || t === 'smallint') return 'bigint';
  if (t === 'double precision' || t === 'real' || t.startsWith('numeric')) return 'double';
  if (t === 'boolean') return 'boolean';
  if (t.startsWith('timestamp')) return 'timestamptz';
  if (t === 'jsonb' || t === 'json') return 'json';
  return 'text';
}

/** What a column of a narrower type than the sink's own holds: whole numbers in a range, texts
 * of at most so many characters, or numbers of at most `digits` digits, `scale` of them after the
 * point (numeric(p,s), which would round the others). */
export type ColumnLimit =
  | { kind: 'range'; min: number; max: number }
  | { kind: 'length'; max: number }
  | { kind: 'decimal'; digits: number; scale: number };

/** A column as the PostgreSQL sink knows it: its type, the limit of a narrower column made by
 * hand, and its PostgreSQL type as format_type writes it (for messages), with `staged` set when
 * that type is one of PostgreSQL's own (the staging table then takes it, see createStageSql). */
export interface PgColumn extends Column {
  limit?: ColumnLimit;
  sql?: string;
  staged?: boolean;
}

const INTEGER_RANGES: Record<string, ColumnLimit> = {
  smallint: { kind: 'range', min: -32768, max: 32767 },
  integer: { kind: 'range', min: -2147483648, max: 2147483647 },
};

/** An existing column: its type (columnTypeOf) and the limit of its PostgreSQL type, if any;
 * `builtIn`: the type is one of PostgreSQL's own (in pg_catalog, not a domain). */
export function pgColumnOf(name: string, pgType: string, builtIn = false): PgColumn {
  const t = pgType.toLowerCase();
  const length = /^(?:character varying|character)\((\d+)\)$/.exec(t);
  const decimal = /^numeric\((\d+),(-?\d+)\)$/.exec(t);
  const limit = INTEGER_RANGES[t] ??
    (length !== null ? { kind: 'length' as const, max: Number(length[1]) } : undefined) ??
    (decimal !== null ? { kind: 'decimal' as const, digits: Number(decimal[1]), scale: Number(decimal[2]) } : undefined);
  return { name, type: columnTypeOf(t), sql: pgType, ...(builtIn && { staged: true }), ...(limit !== undefined && { limit }) };
}

/**
 * Whether a value of the column's type (columns.ts `fits`) is within its limit. A text longer than
 * a varchar(n) or char(n) does not fit, even where PostgreSQL would cut trailing spaces silently:
 * nothing the service sent is cut.
 */
export function withinLimit(value: unknown, limit: ColumnLimit | undefined): boolean {
  if (limit === undefined || value === null || value === undefined) return true;
  if (limit.kind === 'range') return typeof value !== 'number' || (value >= limit.min && value <= limit.max);
  if (limit.kind === 'decimal') return typeof value !== 'number' || fitsDecimal(value, limit.digits, limit.scale);
  return typeof value !== 'string' || characters(value) <= limit.max;
}

/** Whether numeric(digits, scale) stores the number as it is: no digit below the place of
 * 10^-scale (it would be rounded away), and at most digits - scale before the point (an overflow). */
function fitsDecimal(value: number, digits: number, scale: number): boolean {
  if (!Number.isFinite(value)) return false;
  if (value === 0) return true;
  // d.ddd × 10^exponent, in the fewest digits that read back as the number: its highest digit is
  // at 10^exponent, its lowest at 10^(exponent - decimals written). numeric(p,s) holds digits from
  // 10^(p-s-1) down to 10^-s (s may be negative, or above p).
  const [mantissa = '', power = '0'] = Math.abs(value).toExponential().split('e');
  const exponent = Number(power);
  const lowestPlace = exponent - (mantissa.split('.')[1] ?? '').length;
  return lowestPlace >= -scale && exponent + 1 <= digits - scale;
}

/** The length of a text in characters, as PostgreSQL counts them in UTF-8 (code points; a lone
 * surrogate is stored as one U+FFFD). */
function characters(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n -= 1;
        i += 1;
      }
    }
  }
  return n;
}

/** The table of a dataset: every column, `_mismatched`, and the identity as primary key. */
export function createTableSql(table: string, columns: readonly Column[], key: string): string {
  const defs = columns.map((c) => `${ident(c.name)} ${sqlType(c.type)}${c.name === key ? ' NOT NULL' : ''}`);
  defs.push(`${ident(MISMATCH_COLUMN)} JSONB`);
  defs.push(`PRIMARY KEY (${ident(key)})`);
  return `CREATE TABLE IF NOT EXISTS ${table} (${defs.join(', ')})`;
}

export function createStateTableSql(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (key TEXT PRIMARY KEY, state JSONB NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now())`;
}

export function addColumnsSql(table: string, columns: readonly Column[]): string {
  return `ALTER TABLE ${table} ${columns.map((c) => `ADD COLUMN IF NOT EXISTS ${ident(c.name)} ${sqlType(c.type)}`).join(', ')}`;
}

/** A temporary table of the connection with the staged columns, emptied at each commit. */
/**
 * The staging table. A column of one of PostgreSQL's own types is staged in that type, so that a
 * column made by hand gets its values as a COPY straight in would give them (a numeric(p,s) staged
 * as double precision would lose digits in the merge, a date staged as text would not go into a
 * date column at all). Any other (a domain, an enum, a type of the database's own) in the sink's
 * type for its values, as the merge casts them: naming such a type needs a right to use it (and
 * its schema) that the table's owner may not have given the sync's user.
 */
export function createStageSql(stage: string, columns: readonly PgColumn[]): string {
  const typeOf = (c: PgColumn): string => (c.staged === true && c.sql !== undefined ? c.sql : sqlType(c.type));
  return `CREATE TEMP TABLE ${ident(stage)} (${columns.map((c) => `${ident(c.name)} ${typeOf(c)}`).join(', ')}) ON COMMIT DELETE ROWS`;
}

/** `table`: a quoted name (the staging table's, or a dataset's table for a COPY straight in). */
export function copyIntoSql(table: string, columns: readonly Column[]): string {
  return `COPY ${table} (${columns.map((c) => ident(c.name)).join(', ')}) FROM STDIN`;
}

/**
 * Staged rows into the table: new identities inserted, known ones replaced unless the table's
 * version is newer by the cursor field (a late, older read never overwrites a newer version).
 * Rows go in identity order, byte by byte (COLLATE "C", whatever the database's collation: the
 * order of a COPY straight into the table, encode-page.ts), so two transactions writing
 * overlapping pages take their row locks in the same order and cannot deadlock.
 */
export function mergeSql(table: string, stage: string, columns: readonly Column[], key: string, cursor: string | undefined): string {
  const names = columns.map((c) => ident(c.name));
  const updates = columns.filter((c) => c.name !== key).map((c) => `${ident(c.name)} = excluded.${ident(c.name)}`);
  const k = ident(key);
  let sql = `INSERT INTO ${table} AS t (${names.join(', ')}) SELECT ${names.join(', ')} FROM ${stage} ORDER BY ${k} COLLATE "C" ON CONFLICT (${k}) `;
  if (updates.length === 0) return `${sql}DO NOTHING`;
  sql += `DO UPDATE SET ${updates.join(', ')}`;
  if (cursor !== undefined) {
    const c = ident(cursor);
    sql += ` WHERE t.${c} IS NULL OR excluded.${c} >= t.${c}`;
  }
  return sql;
}

/** `key` and `json`: literals (see dollarQuoted). */
export function saveStateSql(table: string, key: string, json: string): string {
  return `INSERT INTO ${table} (key, state, updated_at) VALUES (${key}, ${json}::jsonb, now()) ` +
    'ON CONFLICT (key) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at';
}

/** PostgreSQL cuts names longer than 63 bytes: such a field gets no column, rather than one
 * under a cut name that the next run would not recognise (or two fields sharing it). */
/** Every table has these columns already; a column of the same name cannot be added. */
const SYSTEM_COLUMNS = new Set(['tableoid', 'xmin', 'cmin', 'xmax', 'cmax', 'ctid']);

export const POSTGRES_NAMING: ColumnNaming = {
  key: (name) => (postgresProblem(name) === undefined ? name : null),
  reason: (name) => postgresProblem(name) ?? '',
};

function postgresProblem(name: string): string | undefined {
  const problem = unnameable(name);
  if (problem !== undefined) return problem;
  if (Buffer.byteLength(name) > 63) return 'PostgreSQL names have at most 63 bytes';
  if (SYSTEM_COLUMNS.has(name)) return `${name} is a system column of every PostgreSQL table`;
  return undefined;
}
