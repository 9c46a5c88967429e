// A generated dataset of one tenant. Only keys are stored (cursor value, id, lender flag) plus
// the few rows written after start; a row's fields are regenerated from (seed, tenant, dataset,
// id, version) when a page is served. That keeps a million-row dataset at ~18 MB and lets a
// dataset be built in milliseconds the first time it is read.
import { type CursorField, datasetInfo, type TenantPathKind } from '../../core/catalog.ts';
import { DATA_SPAN } from '../contracts.ts';
import { type GeneratedCode, generateRaw, tableKey } from './generated-rows.ts';
import { KeysetIndex } from './keyset-index.ts';
import { Rng } from '../../prng.ts';
import { mix } from './row-hash.ts';
import { type ExportRow, type RawRecord, redact } from './redact.ts';
import { type ExportTable, lenderIdOf } from './table.ts';
import { isoUtc } from './iso-time.ts';

export interface GeneratedSpec {
  readonly seed: number;
  readonly scale: number;
  readonly tenantIndex: number;
  readonly code: GeneratedCode;
}

const SPAN_START = Date.parse(DATA_SPAN.start);
const SPAN_END = Date.parse(DATA_SPAN.end);
const MONTH = 30 * 86_400_000;
/** Share of rows that copy the previous row's timestamp, so walks must break ties by id. */
const TIE_RATE = 0.12;
/** D26 holds a lender's users: a few hundred at most whatever the scale. */
const D26_MAX_ROWS = 200;

/** Rows of the tenant's lender in a freshly generated dataset. */
export function ownRowTarget(code: GeneratedCode, scale: number): number {
  return code === 'D26' ? Math.min(scale, D26_MAX_ROWS) : scale;
}

/** How rows of a sibling lender interleave with the tenant's in the shared store: a two-state
 * chain (probability of entering a foreign run, probability of staying in it). Via datasets get
 * long runs so a page scanning `limit` candidates can come back short or empty. */
function foreignChain(kind: TenantPathKind): { enter: number; stay: number } {
  return kind === 'via' ? { enter: 0.06, stay: 0.9 } : { enter: 0.015, stay: 0.75 };
}

interface MovedRow {
  readonly createdMs: number;
  readonly cursorMs: number;
  readonly version: number;
}

export class GeneratedTable implements ExportTable {
  readonly spec: GeneratedSpec;
  readonly cursorField: CursorField;
  readonly index: KeysetIndex;
  readonly #key: number;
  /** Generated rows (own and foreign); their ids are 1..baseRows in time order. */
  readonly #baseRows: number;
  /** Ids of the generated own rows, ascending: what advance and churn pick updates from. */
  readonly #ownIds: Uint32Array;
  /** Rows updated or inserted after generation. */
  readonly #moved = new Map<number, MovedRow>();
  #nextId: number;

  constructor(spec: GeneratedSpec) {
    const info = datasetInfo(spec.code)!;
    this.spec = spec;
    this.cursorField = info.cursorField;
    this.#key = tableKey(spec.seed, spec.tenantIndex, spec.code);
    const target = ownRowTarget(spec.code, spec.scale);
    const own = interleave(new Rng(mix(this.#key, 0xb011d)), target, foreignChain(info.pathKind));
    const n = own.length;
    this.#baseRows = n;
    this.#nextId = n + 1;
    this.#ownIds = new Uint32Array(target);
    const ts = new Float64Array(n);
    const ids = new Uint32Array(n);
    let ownSeen = 0;
    for (let i = 0; i < n; i++) {
      ts[i] = this.#isTie(i) ? ts[i - 1]! : this.#freshTs(i);
      ids[i] = i + 1;
      if (own[i] === 1) this.#ownIds[ownSeen++] = i + 1;
    }
    this.index = KeysetIndex.fromSorted(ts, ids, own, n);
  }

  get updatable(): boolean {
    return this.cursorField === 'updated_at';
  }

  get ownBaseCount(): number {
    return this.#ownIds.length;
  }

  render(id: number, ts: number): ExportRow {
    return redact(this.spec.code, this.raw(id, ts));
  }

  /** The unredacted record (what the database holds), for redaction tests. */
  raw(id: number, ts: number): RawRecord {
    const moved = this.#moved.get(id);
    const version = moved?.version ?? 0;
    const createdMs = moved?.createdMs ?? this.#createdOf(id);
    const { seed, tenantIndex, code } = this.spec;
    return generateRaw(code, {
      seed,
      tenantIndex,
      id,
      lenderId: lenderIdOf(tenantIndex),
      base: new Rng(mix(this.#key, id, 1)),
      ver: new Rng(mix(this.#key, id, version, 2)),
      version,
      stamps: stamps(this.cursorField, createdMs, ts),
      cursorMs: ts,
      createdMs,
    });
  }

  /** Moves the `ordinal`-th generated own row to `ms` as a new version of it. */
  update(ordinal: number, ms: number): void {
    const id = this.#ownIds[ordinal]!;
    const moved = this.#moved.get(id);
    const current = moved?.cursorMs ?? this.#baseTs(id);
    this.index.remove(current, id);
    this.index.insert(ms, id, true);
    this.#moved.set(id, { createdMs: moved?.createdMs ?? this.#createdOf(id), cursorMs: ms, version: (moved?.version ?? 0) + 1 });
  }

  /** Adds a new own row stamped `ms`; returns its id. */
  insert(ms: number): number {
    const id = this.#nextId++;
    this.index.insert(ms, id, true);
    this.#moved.set(id, { createdMs: ms, cursorMs: ms, version: 0 });
    return id;
  }

  // Timestamps are a random-access function of the row's position, so nothing per row needs
  // storing beyond the index: row i lands in the i-th slice of DATA_SPAN (sorted as generated),
  // and a tie copies the previous row's value (still sorted, and walks must break it by id).
  #freshTs(i: number): number {
    return SPAN_START + Math.floor(((i + mix(this.#key, i, 4) / 2 ** 32) * (SPAN_END - SPAN_START)) / this.#baseRows);
  }

  #isTie(i: number): boolean {
    return i > 0 && mix(this.#key, i, 5) / 2 ** 32 < TIE_RATE;
  }

  /** The cursor value a generated row was generated with. */
  #baseTs(id: number): number {
    let i = id - 1;
    while (this.#isTie(i)) i--;
    return this.#freshTs(i);
  }

  /** created_at of a generated row, derived from its original cursor value. */
  #createdOf(id: number): number {
    const cursorMs = this.#baseTs(id);
    const r = new Rng(mix(this.#key, id, 3)).next();
    switch (this.cursorField) {
      case 'updated_at':
        return cursorMs - Math.floor(r * Math.min(MONTH, cursorMs - SPAN_START));
      case 'communicated_at':
        return cursorMs + Math.floor(r * 120_000); // logged shortly after it was sent
      default:
        return cursorMs;
    }
  }
}

/** Own (1) and foreign (0) flags, in store order, until `target` own rows are placed. */
function interleave(rng: Rng, target: number, chain: { enter: number; stay: number }): Uint8Array {
  const capacity = target * 3 + 64;
  const flags = new Uint8Array(capacity);
  let n = 0;
  let own = 0;
  let foreign = false;
  while (own < target) {
    const mustBeOwn = n + (target - own) >= capacity;
    foreign = !mustBeOwn && (foreign ? rng.chance(chain.stay) : rng.chance(chain.enter));
    flags[n++] = foreign ? 0 : 1;
    if (!foreign) own++;
  }
  return flags.subarray(0, n);
}

function stamps(field: CursorField, createdMs: number, cursorMs: number): Record<string, string> {
  const cursor = isoUtc(cursorMs);
  switch (field) {
    case 'updated_at':
      return { created_at: isoUtc(createdMs), updated_at: cursor };
    case 'communicated_at':
      return { communicated_at: cursor, created_at: isoUtc(createdMs) };
    default:
      return { created_at: cursor };
  }
}
