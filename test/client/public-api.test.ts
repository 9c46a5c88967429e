// The library's first steps as a user writes them, run against the package entry (src/index.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { LenderClient, startSandbox } from '../../src/index.ts';

describe('public API', () => {
  it('startSandbox comes from the main entry, and a client logs in to it', async () => {
    const sandbox = await startSandbox({ seed: 42, scale: 50 });
    try {
      const client = await LenderClient.login({ ...sandbox.credentials('demo') });
      const rows: unknown[] = [];
      for await (const row of client.exportRows('D07', { since: '2026-01-01T00:00:00Z' })) rows.push(row);
      assert.ok(rows.length > 0);
      await client.close();
    } finally {
      await sandbox.close();
    }
  });

  it('the main entry imports only types from the sandbox statically: it is loaded on first use', () => {
    const source = readFileSync(new URL('../../src/index.ts', import.meta.url), 'utf8');
    const sandboxImports = source.split('\n').filter((line) => /from\s+['"][^'"]*\/sandbox(?:\/[^'"]*)?['"]/.test(line));
    assert.ok(sandboxImports.length > 0);
    assert.deepEqual(sandboxImports.filter((line) => !/^\s*(?:import|export)\s+type\b/.test(line)), []);
  });
});
