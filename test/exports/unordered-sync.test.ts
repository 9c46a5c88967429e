// sync() with windows read four at a time and pages handed over as they come (ordered: false),
// stopped by a failing commit at several points and run again each time: the NDJSON files and
// the DuckDB tables end with every row of the service exactly once, because each page is
// committed with the state that records the windows done and where the others stand.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson } from '../../src/exports/highwater.ts';
import type { DatasetState } from '../../src/exports/state.ts';
import { duckdbSink } from '../../src/sinks/duckdb-sink.ts';
import { ndjsonSink } from '../../src/sinks/ndjson-sink.ts';
import type { Sink } from '../../src/sinks/sink.ts';
import { sync } from '../../src/sinks/sync.ts';
import { EVERYTHING, plainWalk } from '../helpers/plain-walk.ts';
import { fixture, type Fixture } from './helpers.ts';

const CODES = ['D03', 'D23', 'D07'] as const;
/** The commit of rows each run is stopped at, taken in turn until a run gets to the end. */
const STOPS = [3, 5, 2, 4];
/** Runs at most: each run commits at least one group of a dataset still loading. */
const MAX_RUNS = 60;
/** A page costs this much, so a group (the pages of a few tens of milliseconds) holds a few pages
 * whatever the machine's speed, and each dataset takes several commits. */
const LATENCY_MS = 10;

class Stop extends Error {}

/** The sink, failing the `at`-th commit that carries rows of a dataset still loading (never loaded,
 * or stopped part-way), before any of it is written: a crash between commits. Commits of datasets
 * loaded already (an incremental re-read) are not counted, so every run moves the load on. */
function stoppingAt(sink: Sink, at: number): Sink {
  let commits = 0;
  const loading = new Set<string>();
  return {
    target: sink.target,
    ...(sink.lock !== undefined && { lock: () => sink.lock!() }),
    open: async (dataset) => {
      const state = await sink.open(dataset);
      if (state === undefined || state.load !== null) loading.add(dataset.code);
      return state;
    },
    commit: async (page) => {
      if (page.rows.length > 0 && loading.has(page.dataset.code)) {
        commits += 1;
        if (commits === at) throw new Stop(`stopped at commit ${at}`);
      }
      await sink.commit(page);
    },
    location: (dataset) => sink.location(dataset),
    close: () => sink.close(),
  };
}

/** Runs sync() stopped at the next of STOPS until a run gets to the end; returns the states seen
 * after the stops. */
async function syncWithStops(f: Fixture, makeSink: () => Sink, states: () => Promise<(DatasetState | undefined)[]>): Promise<DatasetState[]> {
  const seen: DatasetState[] = [];
  let stops = 0;
  f.sandbox.setFaults({ latencyMs: LATENCY_MS });
  try {
    for (let run = 0; ; run += 1) {
      assert.ok(run < MAX_RUNS, `the load ends within ${MAX_RUNS} runs`);
      const sink = makeSink();
      try {
        await sync(f.client, CODES, { to: stoppingAt(sink, STOPS[run % STOPS.length]!), ordered: false, concurrency: 4, limit: 20 });
        break;
      } catch (error) {
        if (!(error instanceof Stop)) throw error;
        stops += 1;
      } finally {
        await sink.close();
      }
      seen.push(...(await states()).filter((s): s is DatasetState => s !== undefined));
    }
  } finally {
    f.sandbox.setFaults({ latencyMs: 0 });
  }
  assert.ok(stops >= 3, `several runs were stopped part-way (${stops})`);
  return seen;
}

describe('sync() with ordered: false and concurrency 4, stopped and run again', () => {
  let f: Fixture;
  let dir: string;
  const reference = new Map<string, string[]>();

  before(async () => {
    f = await fixture({ seed: 17, scale: 1000 });
    dir = await mkdtemp(join(tmpdir(), 'lender-unordered-sync-'));
    for (const code of CODES) reference.set(code, (await plainWalk(f.client, code, EVERYTHING)).map(canonicalJson).sort());
  });
  after(async () => {
    await f?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('NDJSON: every row exactly once', async () => {
    const out = join(dir, 'ndjson');
    const statePath = join(out, '.lender-state.json');
    const readStates = async () => {
      try {
        const file = JSON.parse(readFileSync(statePath, 'utf8')) as { datasets: Record<string, DatasetState> };
        return Object.values(file.datasets);
      } catch {
        return [];
      }
    };
    const states = await syncWithStops(f, () => ndjsonSink({ dir: out }), readStates);
    assert.ok(states.some((s) => s.load !== null && s.version === 2 && s.load.progress !== undefined), 'a stop left a load in progress, windows recorded');
    for (const code of CODES) {
      const lines = readFileSync(join(out, `${code}.ndjson`), 'utf8').split('\n').slice(0, -1);
      assert.deepEqual(lines.map((l) => canonicalJson(JSON.parse(l))).sort(), reference.get(code), code);
    }
  });

  test('DuckDB: every row exactly once', async () => {
    const path = join(dir, 'lender.duckdb');
    let probe: ReturnType<typeof duckdbSink> | undefined;
    const readStates = async () => {
      probe = duckdbSink({ path });
      try {
        const rows = await probe.query('SELECT CAST(state AS VARCHAR) AS state FROM _lender_state');
        return rows.map((r) => JSON.parse(r.state as string) as DatasetState);
      } catch {
        return [];
      } finally {
        await probe.close();
      }
    };
    const states = await syncWithStops(f, () => duckdbSink({ path }), readStates);
    assert.ok(states.some((s) => s.load !== null && s.version === 2), 'a stop left a load in progress');
    const sink = duckdbSink({ path });
    try {
      for (const code of CODES) {
        const table = code.toLowerCase();
        const [{ n, ids }] = (await sink.query(`SELECT count(*) AS n, count(DISTINCT public_id) AS ids FROM ${table}`)) as [{ n: bigint; ids: bigint }];
        const expected = reference.get(code)!.map((r) => (JSON.parse(r) as { public_id: string }).public_id);
        assert.equal(Number(n), expected.length, `${code}: as many rows as the service has`);
        assert.equal(Number(ids), expected.length, `${code}: each once`);
        const stored = (await sink.query(`SELECT public_id FROM ${table}`)).map((r) => String(r.public_id)).sort();
        assert.deepEqual(stored, [...expected].sort(), code);
      }
    } finally {
      await sink.close();
    }
  });
});
