import type { DatasetState, ExportRow, Sink } from '../src/index.ts';

/** Rows upserted by their identity into maps, each page's state saved in the same step. */
export function memorySink(): Sink & { tables: Map<string, Map<string, ExportRow>> } {
  const tables = new Map<string, Map<string, ExportRow>>();
  const states = new Map<string, DatasetState>();
  return {
    target: 'memory',
    tables,
    location: (dataset) => `memory:${dataset.code}`,
    async open(dataset) {
      return states.get(dataset.key);   // where the load resumes; nothing to undo here
    },
    async commit({ dataset, rows, state }) {
      const table = tables.get(dataset.code) ?? new Map<string, ExportRow>();
      // public_id, except where the dataset says it is not unique (D16): then the row itself.
      for (const row of rows) table.set(dataset.identity === 'key' ? String(row.public_id) : JSON.stringify(row), row);
      tables.set(dataset.code, table);
      states.set(dataset.key, structuredClone(state));   // rows and state together, or neither
    },
    async close() {},
  };
}
