// The Sink interface as a user meets it: the example of docs/sinks.md (examples/memory-sink.ts,
// compared with the page line for line) loads datasets through sync() over HTTPS, is stopped part
// way, and a second sync resumes from the state it committed: every row once.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { memorySink } from '../../examples/memory-sink.ts';
import { sync } from '../../src/sinks/sync.ts';
import { ConfigError } from '../../src/core/errors.ts';
import type { ExportOptions } from '../../src/exports/export-stream.ts';
import type { Sink } from '../../src/sinks/sink.ts';
import type { DatasetRef } from '../../src/core/types.ts';
import { EVERYTHING, plainWalk } from '../helpers/plain-walk.ts';
import { FakeApi, makeRows } from '../exports/fake-api.ts';
import { fixture, type Fixture } from '../exports/helpers.ts';

const root = new URL('../../', import.meta.url);

describe('a sink of your own (the docs example)', () => {
  let f: Fixture;
  before(async () => {
    f = await fixture({ seed: 5, scale: 300 });
  });
  after(async () => f?.close());

  it('docs/sinks.md shows examples/memory-sink.ts as it is', () => {
    const page = readFileSync(new URL('docs/sinks.md', root), 'utf8');
    const file = readFileSync(new URL('examples/memory-sink.ts', root), 'utf8').replace("from '../src/index.ts'", "from 'lender-streams'");
    assert.ok(page.includes('```ts\n' + file + '```'), 'the example in docs/sinks.md differs from examples/memory-sink.ts');
    assert.ok(file.split('\n').length <= 25, 'the example stays short');
  });

  it('a bad option is a ConfigError before any dataset is opened, not a failure of each', async () => {
    const bad: [ExportOptions, RegExp][] = [
      [{ concurrency: 0 }, /^concurrency must be/], [{ window: 'fortnight' }, /window/], [{ limit: 5000 }, /^limit must be a whole number from 1 to 1000/],
    ];
    for (const [opts, message] of bad) {
      let opened = 0;
      const sink = memorySink();
      const counting: Sink = {
        ...sink,
        async open(dataset) {
          opened += 1;
          return sink.open(dataset);
        },
      };
      await assert.rejects(sync(f.client, ['D07', 'D03'], { to: counting, ...opts }),
        (error: unknown) => error instanceof ConfigError && message.test(error.message), JSON.stringify(opts));
      assert.equal(opened, 0, JSON.stringify(opts));
      assert.equal(sink.tables.size, 0);
    }
  });

  it('sync reads two windows at once unless told otherwise, every row once either way', async () => {
    // 1,200 rows three hours apart: about five months, so windows to read side by side.
    class CountingApi extends FakeApi {
      inFlight = 0;
      most = 0;
      override async fetchPage(...args: Parameters<FakeApi['fetchPage']>): ReturnType<FakeApi['fetchPage']> {
        this.most = Math.max(this.most, ++this.inFlight);
        try {
          return await super.fetchPage(...args);
        } finally {
          this.inFlight -= 1;
        }
      }
    }
    const rows = makeRows(1200);
    for (const [opts, most] of [[{}, 2], [{ concurrency: 1 }, 1]] as const) {
      const api = new CountingApi({ rows });
      const sink = memorySink();
      await sync(api, ['D23'], { to: sink, window: 'month', limit: 50, ...opts });
      assert.equal(api.most, most, JSON.stringify(opts));
      assert.equal(sink.tables.get('D23')!.size, rows.length, JSON.stringify(opts));
    }
  });

  it('keeps every row of D16, whose public_id is not unique: one entry per distinct row', async () => {
    const sink = memorySink();
    await sync(f.client, ['D16'], { to: sink });
    const expected = await plainWalk(f.client, 'D16', EVERYTHING);
    assert.ok(new Set(expected.map((r) => r.public_id)).size < expected.length, 'the sandbox gives D16 rows sharing a public_id');
    assert.deepEqual([...sink.tables.get('D16')!.values()].map((r) => JSON.stringify(r)).sort(), expected.map((r) => JSON.stringify(r)).sort());
  });

  it('a dataset named twice, by its code and by its section, is loaded once', async () => {
    const sink = memorySink();
    const streams: string[] = [];
    const summary = await sync(f.client, ['D07', { section: 'S2', dataset: 'D07' }, 'D03'], {
      to: sink, onStream: (stream) => streams.push(stream.dataset.code),
    });
    assert.deepEqual(streams, ['D07', 'D03']);
    assert.deepEqual(Object.keys(summary), ['D07', 'D03']);
    assert.equal(summary.D07!.mode, 'initial');
    const expected = await plainWalk(f.client, 'D07', EVERYTHING);
    assert.equal(summary.D07!.rows, expected.length);
    assert.equal(sink.tables.get('D07')!.size, expected.length);
    // Counted once in a failure's message too.
    await assert.rejects(sync(f.client, ['D07', 'D07', 'D99' as DatasetRef], { to: memorySink() }), /^SyncError: 1 of 2 datasets failed to sync: D99 /);
  });

  it('loads D07 and D03, stopped after a few pages and resumed: every row once', async () => {
    const sink = memorySink();
    const stop = new AbortController();
    let pages = 0;
    await assert.rejects(sync(f.client, ['D07', 'D03'], {
      to: sink, limit: 25, signal: stop.signal,
      onStream: (stream) => stream.on('page', () => {
        if (++pages === 5) stop.abort();
      }),
    }));
    assert.ok((sink.tables.get('D07')?.size ?? 0) > 0, 'the first run committed some rows');
    const summary = await sync(f.client, ['D07', 'D03'], { to: sink, limit: 25 });
    assert.equal(summary.D07!.mode, 'resumed');
    for (const code of ['D07', 'D03']) {
      const expected = await plainWalk(f.client, code as DatasetRef, EVERYTHING);
      const table = sink.tables.get(code)!;
      assert.equal(table.size, expected.length, `${code}: one row per public_id`);
      for (const row of expected) assert.deepEqual(table.get(String(row.public_id)), row);
    }
  });
});
