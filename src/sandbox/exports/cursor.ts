// Opaque page cursors (the service's pagination contract, docs/service-contract.md). A cursor names the boundary row
// (cursor-field value and row id) and means "the rows after it in this order"; it holds no
// position or snapshot, so it never expires and replaying it returns the same page.
// It also carries the dataset and sort direction, and a checksum, so a cursor used on another
// dataset, with the other sort, or edited by hand is refused (a 500, as the service does).
import { Buffer } from 'node:buffer';
import { mix } from './row-hash.ts';

export type SortOrder = 'asc' | 'desc';

export interface CursorKey {
  readonly dataset: string;
  readonly sort: SortOrder;
  /** Cursor-field value of the boundary row, epoch milliseconds. */
  readonly ts: number;
  /** Row identifier of the boundary row (internal record id). */
  readonly id: number;
}

export class CursorError extends Error {
  override readonly name = 'CursorError';
}

const VERSION = 'c1';
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function checksum(payload: string): string {
  const codes: number[] = [];
  for (let i = 0; i < payload.length; i++) codes.push(payload.charCodeAt(i));
  return mix(0x5eed, ...codes).toString(36);
}

export function encodeCursor(key: CursorKey): string {
  const payload = `${VERSION}.${key.dataset}.${key.sort === 'asc' ? 'a' : 'd'}.${key.ts}.${key.id}`;
  return Buffer.from(`${payload}.${checksum(payload)}`, 'utf8').toString('base64url');
}

/** Decodes a cursor for `dataset` read in `sort` order, or throws CursorError saying why. */
export function decodeCursor(cursor: string, dataset: string, sort: SortOrder): CursorKey {
  // Buffer's base64url decoder skips characters it does not know; refuse them instead.
  if (!BASE64URL.test(cursor) || cursor.length > 200) throw new CursorError('not a base64url token');
  const parts = Buffer.from(cursor, 'base64url').toString('utf8').split('.');
  if (parts.length !== 6 || parts[0] !== VERSION) throw new CursorError('not a cursor of this service');
  const [, code, dir, tsText, idText, sum] = parts as [string, string, string, string, string, string];
  if (checksum(parts.slice(0, 5).join('.')) !== sum) throw new CursorError('checksum mismatch');
  if (code !== dataset) throw new CursorError(`cursor of ${code} used on ${dataset}`);
  const cursorSort: SortOrder = dir === 'a' ? 'asc' : 'desc';
  if (cursorSort !== sort) throw new CursorError(`cursor of a ${cursorSort} walk used with sort=${sort}`);
  const ts = Number(tsText);
  const id = Number(idText);
  if (!Number.isSafeInteger(ts) || !Number.isSafeInteger(id) || id < 0) throw new CursorError('bad boundary key');
  return { dataset: code, sort: cursorSort, ts, id };
}
