// Names every JavaScript object has (toString, constructor, __proto__) where a name from outside
// the program is expected: a field of a row, a public_id, a key of a state file, a code in the
// live catalog, a fault kind. Each is an ordinary name, or refused as one, never the member of
// Object.prototype it happens to spell.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LenderClient } from '../../src/client/client.ts';
import { ProtocolError, UnknownDatasetError } from '../../src/core/errors.ts';
import { ownField, withField } from '../../src/core/own-fields.ts';
import { resolveDataset } from '../../src/core/resolve-dataset.ts';
import type { ExportRow } from '../../src/core/types.ts';
import { pruneSeen, recordSeen } from '../../src/exports/highwater.ts';
import { fileState, type DatasetState } from '../../src/exports/state.ts';
import { FaultSpecError, parseFaultSpec } from '../../src/sandbox/faults-spec.ts';
import { tableCells } from '../../src/session/table.ts';
import { sync } from '../../src/sinks/sync.ts';
import { startScriptedAccountsServer, type ScriptedAccountsServer } from '../accounts/scripted-accounts-server.ts';

const NAMES = ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf'];

describe('names Object.prototype has', () => {
  it('ownField reads only what an object holds; withField sets __proto__ as a field', () => {
    const parsed = JSON.parse('{"__proto__":1,"a":2}') as Record<string, unknown>;
    assert.equal(ownField(parsed, '__proto__'), 1);
    for (const name of NAMES.filter((n) => n !== '__proto__')) assert.equal(ownField(parsed, name), undefined, name);
    const bag = withField(withField(null, '__proto__', 'kept'), 'toString', 'also kept');
    assert.equal(Object.getPrototypeOf(bag), Object.prototype);
    assert.equal(JSON.stringify(bag), '{"__proto__":"kept","toString":"also kept"}');
  });

  it('a state file keeps datasets under such keys, and has none it was not given', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lender-proto-state-'));
    try {
      const path = join(dir, 'state.json');
      const state = (dataset: string) => ({ version: 2, dataset, highWater: null, load: null }) as DatasetState;
      const first = fileState(path);
      for (const key of ['toString', '__proto__']) await first.save(key, state(key));
      const again = fileState(path);
      for (const key of ['toString', '__proto__']) assert.deepEqual(await again.load(key), state(key), key);
      for (const key of ['constructor', 'valueOf']) assert.equal(await again.load(key), undefined, key);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the lookback memory keeps a row whose public_id is __proto__', () => {
    const seen: Record<string, string> = {};
    const rows: ExportRow[] = [{ public_id: '__proto__', updated_at: '2026-01-02T00:00:00.000Z' }, { public_id: 'a', updated_at: '2026-01-03T00:00:00.000Z' }];
    recordSeen(seen, rows, 'updated_at', '2026-01-01T00:00:00.000Z');
    assert.deepEqual(Object.keys(seen), ['__proto__', 'a']);
    assert.deepEqual(Object.keys(pruneSeen(seen, '2026-01-02T00:00:00.000Z')), ['__proto__', 'a']);
  });

  it('a table of rows shows a blank, not a function, where a row lacks such a field', () => {
    const cells = tableCells([{ toString: 'x', n: 1 }, { n: 2 }]);
    const col = cells.columns.indexOf('toString');
    assert.notEqual(col, -1);
    assert.equal(cells.rows[0]![col], 'x');
    assert.doesNotMatch(cells.rows[1]![col]!, /function|native code/);
    // Other names are read as before, from getters too.
    const withGetter = new (class { get amount(): number { return 6; } })();
    assert.deepEqual(tableCells([withGetter], ['amount']).rows, [['6']]);
  });

  it('--faults refuses them as unknown kinds', () => {
    for (const name of NAMES) {
      assert.throws(() => parseFaultSpec(`${name}=0.1`), (e: unknown) => e instanceof FaultSpecError && e.message.includes(`unknown fault kind '${name}'`), name);
    }
  });

  it('an explicit { section, dataset } must be codes: no such names, no path', () => {
    assert.deepEqual(resolveDataset({ section: 'S2', dataset: 'D07' }), { section: 'S2', dataset: 'D07' });
    assert.deepEqual(resolveDataset({ section: 'S9', dataset: 'D99' }), { section: 'S9', dataset: 'D99' }, 'the service judges new codes');
    for (const dataset of [...NAMES, '../x', 'D07/../../etc', 'd07', '']) {
      assert.throws(() => resolveDataset({ section: 'S2', dataset }), UnknownDatasetError, dataset);
    }
    assert.throws(() => resolveDataset({ section: 'toString', dataset: 'D07' }), UnknownDatasetError);
  });
});

describe('a live catalog naming something other than codes', () => {
  let server: ScriptedAccountsServer;
  let client: LenderClient;
  let dir: string;
  before(async () => {
    server = await startScriptedAccountsServer();
    client = await LenderClient.login(server.credentials());
    dir = await mkdtemp(join(tmpdir(), 'lender-proto-catalog-'));
  });
  after(async () => {
    await client?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const catalog = (code: string) => ({
    status: 200,
    body: { code: 200, message: 'success', errors: [], body: { schemaVersion: '1', sections: [{ code: 'S2', datasets: [{ code: 'D07', available: true }, { code, available: true }] }] } },
  });

  it('is a ProtocolError naming the code; a sync of the catalog writes nothing', async () => {
    for (const code of ['toString', '__proto__', '../../escaped', 'D07/x']) {
      server.gets.set('/exports/catalog', catalog(code));
      await assert.rejects(client.catalog(), (e: unknown) => e instanceof ProtocolError && e.message.includes(JSON.stringify(code)), code);
      await assert.rejects(sync(client, undefined, { out: join(dir, 'out') }), ProtocolError, code);
    }
    const noCode = { status: 200, body: { code: 200, message: 'success', errors: [], body: { schemaVersion: '1', sections: [{ code: 'S2', datasets: [{ available: true }] }] } } };
    server.gets.set('/exports/catalog', noCode);
    await assert.rejects(client.catalog(), (e: unknown) => e instanceof ProtocolError && /names nothing where a code/.test(e.message));
    const left = await readdir(dir, { recursive: true });
    assert.deepEqual(left.filter((f) => f.endsWith('.ndjson')), []);
    server.gets.set('/exports/catalog', catalog('D23'));
    assert.deepEqual((await client.catalog()).sections[0]!.datasets.map((d) => d.code), ['D07', 'D23']);
  });
});
