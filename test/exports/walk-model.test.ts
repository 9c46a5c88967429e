// Model-based property test of the export walk: the real client and export stream against a
// model of the service (direct and via datasets, heavy ties on the cursor field, short and empty
// pages, D16's repeated public_id) that answers any generated sequence of 500s, 503s, 504s,
// resets and 401s at any request. For every case the rows delivered equal the model's plain walk
// exactly once and in order: through failures (a failed run resumes from its last checkpoint),
// from every checkpoint of the run, and on the incremental load that follows.
// LENDER_SEED replays a failing run; LENDER_MODEL_RUNS sets the number of cases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { LenderClient } from '../../src/client/client.ts';
import { LenderError, ProtocolError } from '../../src/core/errors.ts';
import { inMemoryService } from '../../src/core/transport.ts';
import type { DatasetRef } from '../../src/core/types.ts';
import { exportPages, type ExportOptions } from '../../src/exports/export-stream.ts';
import type { DatasetState } from '../../src/exports/state.ts';
import { MODEL_AUTH_URL, MODEL_LOGIN, ModelService, type Fault, type ModelRow } from '../helpers/model-service.ts';

const RUNS = Number(process.env.LENDER_MODEL_RUNS ?? 2000);
const SEED = process.env.LENDER_SEED ? Number(process.env.LENDER_SEED) : Date.now() % 1_000_000;

const DATASETS = {
  D07: { section: 'S2', cursorField: 'updated_at', pathKind: 'direct' },
  D23: { section: 'S4', cursorField: 'communicated_at', pathKind: 'via' },
  D16: { section: 'S3', cursorField: 'updated_at', pathKind: 'direct' },
} as const;
type Code = keyof typeof DATASETS;

// Few distinct instants over about seven weeks, so rows tie in groups and windows split across
// months and down to the hour.
const BASE = Date.parse('2025-02-20T00:00:00.000Z');
const SLOTS = 14;
function slotTime(slot: number): number {
  return BASE + slot * 3 * 86_400_000 + (slot % 4) * 37 * 60_000 + (slot % 3) * 1_234;
}

interface RowSpec { slot: number; own: boolean; group: number }

const rowSpec = fc.record({
  slot: fc.integer({ min: 0, max: SLOTS - 1 }),
  // Most candidates of a via dataset are the tenant's own; the rest make pages short or empty.
  own: fc.oneof({ weight: 2, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  group: fc.integer({ min: 0, max: 4 }),
});

const fault: fc.Arbitrary<Fault> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('ok' as const) },
  { weight: 3, arbitrary: fc.constant(504 as const) },
  { weight: 1, arbitrary: fc.constantFrom<Fault>(500, 503, 401, 'reset') },
);

const scenario = fc.record({
  dataset: fc.constantFrom<Code>('D07', 'D23', 'D16'),
  sort: fc.constantFrom<'asc' | 'desc'>('asc', 'desc'),
  limit: fc.integer({ min: 1, max: 7 }),
  concurrency: fc.integer({ min: 1, max: 3 }),
  prefetch: fc.integer({ min: 0, max: 2 }),
  // Where a windowed load starts: right before the data, or months or years of empty windows
  // before it (grown windows; the default origin's decade of them is the window-growth suite's).
  origin: fc.constantFrom('2025-02-01T00:00:00.000Z', '2024-09-01T00:00:00.000Z', '2023-01-01T00:00:00.000Z'),
  rows: fc.array(rowSpec, { maxLength: 45 }),
  later: fc.array(rowSpec, { maxLength: 8 }),
  faults: fc.array(fault, { maxLength: 30 }),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function modelRows(specs: readonly RowSpec[], code: Code, firstUid: number, slotOffset = 0): ModelRow[] {
  return specs.map((s, i) => {
    const uid = firstUid + i;
    return {
      uid,
      t: slotTime(s.slot + slotOffset),
      // D16: deals of one case share its public_id; the others are unique per row.
      publicId: code === 'D16' ? `CASE-${s.group}` : `P-${uid}`,
      own: DATASETS[code].pathKind === 'direct' ? true : s.own,
    };
  });
}

interface RunResult {
  rows: string[];
  checkpoints: { state: DatasetState; delivered: number }[];
  completed: DatasetState;
  failures: number;
}

/**
 * Reads the dataset to its end from `start`: a run that fails resumes from its last checkpoint
 * with a new client (what a re-run of `lender sync` does), keeping the rows it had delivered.
 */
async function readToEnd(service: ModelService, ref: DatasetRef, opts: ExportOptions, start: DatasetState | null): Promise<RunResult> {
  const rows: string[] = [];
  const checkpoints: RunResult['checkpoints'] = [];
  let state = start;
  for (let failures = 0; ; failures++) {
    assert.ok(failures < 100, 'the load did not finish in 100 runs');
    let client: LenderClient | undefined;
    try {
      client = await LenderClient.login({
        authUrl: MODEL_AUTH_URL, ...MODEL_LOGIN, [inMemoryService]: service.dispatcher,
        retry: { baseDelayMs: 0, maxDelayMs: 0 }, proactiveRefresh: false,
      });
      const stream = exportPages(client, ref, { ...opts, resume: state });
      for await (const page of stream) {
        for (const row of page.rows) rows.push(String(row.amount));
        checkpoints.push({ state: page.checkpoint.state, delivered: rows.length });
        state = page.checkpoint.state;
      }
      assert.ok(stream.completedState !== null, 'the stream ended without a completed state');
      return { rows, checkpoints, completed: stream.completedState, failures };
    } catch (error) {
      // Faults may end a run (retries spent, a 504 on a window at the minimum span, a token
      // refused again right after its renewal); nothing else may: a ProtocolError here would be
      // the walk's loop guard firing on a sane service.
      if (!(error instanceof LenderError) || error instanceof ProtocolError) throw error;
    } finally {
      await client?.close();
    }
  }
}

async function check(s: Scenario): Promise<void> {
  const code = s.dataset;
  const def = DATASETS[code];
  const service = new ModelService({ section: def.section, dataset: code, cursorField: def.cursorField, pathKind: def.pathKind, rows: modelRows(s.rows, code, 1), faults: s.faults });
  const ref: DatasetRef = { section: def.section, dataset: code };
  const opts: ExportOptions = {
    sort: s.sort, limit: s.limit, concurrency: s.concurrency, prefetch: s.prefetch,
    origin: s.origin,
  };
  const expected = service.reference(s.sort);

  const full = await readToEnd(service, ref, opts, null);
  assert.deepEqual(full.rows, expected, 'the rows delivered through the faults');

  for (const [i, cp] of full.checkpoints.entries()) {
    service.replayFaults();
    const rest = await readToEnd(service, ref, opts, cp.state);
    assert.deepEqual([...full.rows.slice(0, cp.delivered), ...rest.rows], expected, `resumed from checkpoint ${i}`);
  }

  // Rows written after the load, some at exactly its high-water value: the incremental load
  // delivers those and nothing else.
  const top = s.rows.length === 0 ? 0 : Math.max(...s.rows.map((r) => r.slot));
  const later = modelRows(s.later.map((r) => ({ ...r, slot: r.slot % 3 })), code, 1000, top);
  service.add(later);
  service.replayFaults();
  const next = await readToEnd(service, ref, opts, full.completed);
  assert.deepEqual(next.rows, service.reference(s.sort, later), 'the incremental load after it');
}

test(`export walk model: ${RUNS} generated services and fault sequences, every row exactly once, in order (seed ${SEED})`, async (t) => {
  t.diagnostic(`seed=${SEED} (LENDER_SEED=${SEED} replays this run)`);
  await fc.assert(fc.asyncProperty(scenario, check), { numRuns: RUNS, seed: SEED });
});
