// Shared by the HTTPS integration tests of the export streams.
import type { ClientOptions, LenderClient } from '../../src/client/client.ts';
import type { ExportRow } from '../../src/core/types.ts';
import { connect } from '../../src/connect.ts';
import { rowKey } from '../../src/exports/highwater.ts';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/index.ts';
import { TEST_SANDBOX_DEFAULTS } from '../helpers/sandbox.ts';

export interface Fixture {
  sandbox: Sandbox;
  client: LenderClient;
  close(): Promise<void>;
}

export async function fixture(options: SandboxOptions, clientOptions: ClientOptions = {}): Promise<Fixture> {
  const connection = await connect({ sandbox: { ...TEST_SANDBOX_DEFAULTS, ...options }, client: clientOptions });
  return { sandbox: connection.sandbox!, client: connection.client, close: () => connection.close() };
}

/** Rows as a sorted list of their JSON: equal lists mean the same multiset of rows. */
export function multiset(rows: readonly ExportRow[]): string[] {
  return rows.map((r) => JSON.stringify(r)).sort();
}

export function duplicateKeys(rows: readonly ExportRow[]): string[] {
  const seen = new Set<string>();
  const dups: string[] = [];
  for (const row of rows) {
    const key = rowKey(row);
    if (seen.has(key)) dups.push(key);
    seen.add(key);
  }
  return dups;
}

export async function drain<T>(iterable: AsyncIterable<unknown>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item as T);
  return out;
}

/** Lets pending I/O complete without asserting anything about time. */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
}
