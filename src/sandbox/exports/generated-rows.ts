// Raw records of the generated datasets (everything except D01, D02, D03 and D05, which come
// from the accounts state). A raw record is what the service's database would hold: it carries
// internal fields (id, lender_id, raw identity numbers, fields the export drops) that redaction
// must remove. Each record is a pure function of its RowContext.
import type { DatasetCode } from '../../core/catalog.ts';
import type { Rng } from '../../prng.ts';
import { isoUtc } from './iso-time.ts';
import { mix, permute48, uuidFor } from './row-hash.ts';
import type { RawRecord } from './redact.ts';

export type GeneratedCode = Exclude<DatasetCode, 'D01' | 'D02' | 'D03' | 'D05'>;

export const GENERATED_CODES: readonly GeneratedCode[] = [
  'D04', 'D06', 'D07', 'D08', 'D09', 'D10', 'D11', 'D12', 'D13', 'D14', 'D15', 'D16', 'D17', 'D18',
  'D19', 'D20', 'D21', 'D22', 'D23', 'D24', 'D26',
];

export function isGeneratedCode(code: DatasetCode): code is GeneratedCode {
  return (GENERATED_CODES as readonly string[]).includes(code);
}

export interface RowContext {
  readonly seed: number;
  readonly tenantIndex: number;
  readonly id: number;
  /** Internal id of the lender the row belongs to (layer two of tenant isolation). */
  readonly lenderId: number;
  /** Fixed per row: fields that never change. */
  readonly base: Rng;
  /** Per row and version: fields an update may change. */
  readonly ver: Rng;
  /** 0 for the row as generated; +1 per update. */
  readonly version: number;
  /** The timestamp fields of the dataset (created_at, updated_at / communicated_at), ISO. */
  readonly stamps: Readonly<Record<string, string>>;
  /** Epoch ms of the row's cursor field. */
  readonly cursorMs: number;
  /** Epoch ms of created_at (equal to cursorMs for logs keyed on created_at). */
  readonly createdMs: number;
}

/** Key of a dataset's id space for a tenant: public ids of other datasets derive from it. */
export function tableKey(seed: number, tenantIndex: number, code: DatasetCode): number {
  return mix(seed, tenantIndex, Number(code.slice(1)));
}

/** Public id (UUID) of a row of another dataset, for references between datasets. */
function ref(r: RowContext, code: DatasetCode, id: number): string {
  return uuidFor(tableKey(r.seed, r.tenantIndex, code), id);
}

function ownUuid(r: RowContext, code: DatasetCode): string {
  return ref(r, code, r.id);
}

function isoDate(ms: number): string {
  return isoUtc(ms).slice(0, 10);
}

/** A moment between the row's creation and its cursor value, drawn from the version's stream:
 * when a version was paid, logged in, and the like. */
function sinceCreated(r: RowContext): number {
  return r.createdMs + Math.floor(r.ver.next() * (r.cursorMs - r.createdMs));
}

const DAY = 86_400_000;
const CHANNELS = ['SMS', 'EMAIL', 'WHATSAPP', 'VOICE'] as const;
const FIRST_NAMES = ['Aisha', 'Omar', 'Fatima', 'Khalid', 'Mariam', 'Yousef', 'Layla', 'Hassan', 'Noura', 'Ali', 'Sara', 'Rashid'];
const LAST_NAMES = ['Al Mansoori', 'Haddad', 'Khan', 'Al Farsi', 'Nasser', 'Saleh', 'Rahman', 'Aziz', 'Qureshi', 'Hamdan'];

/** Ids of parent rows: a plausible spread over the parent's first rows. */
function parentId(r: RowContext, perParent: number): number {
  return 1 + Math.floor((r.id - 1) / perParent) + r.base.int(0, 3);
}

function caseNumber(id: number): number {
  // Groups of 1, 1 and 2 rows: some deals share a case, so D16's public_id repeats.
  return Math.floor((id * 2) / 3);
}

function ip(rng: Rng): string {
  return `${rng.pick([10, 37, 91, 185, 213])}.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(1, 254)}`;
}

const GENERATORS: Readonly<Record<GeneratedCode, (r: RowContext) => RawRecord>> = {
  D04: (r) => {
    const delta = -r.base.int(1, 500) * 10;
    return {
      id: r.id, lender_id: r.lenderId, public_id: ownUuid(r, 'D04'),
      account_public_id: ref(r, 'D02', parentId(r, 4)),
      change_type: r.base.pickWeighted([['PAYMENT', 6], ['FEE', 2], ['ADJUSTMENT', 1], ['WRITE_OFF', 1]] as const),
      amount_delta: delta, balance_after: r.base.int(0, 50_000),
      ...r.stamps,
    };
  },
  D06: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: ownUuid(r, 'D06'),
    borrower_public_id: String(parentId(r, 3)),
    attribute_key: r.base.pick(['employer', 'salary_band', 'segment', 'risk_score', 'preferred_channel']),
    old_value: r.base.chance(0.3) ? null : String(r.base.int(1, 9)),
    new_value: String(r.base.int(1, 9)),
    ...r.stamps,
  }),
  D07: (r) => {
    const amount = r.base.int(5, 5_000) * 10;
    const initial = r.base.pickWeighted([['SUCCESS', 7], ['PENDING', 2], ['FAILED', 1]] as const);
    // An update settles a pending payment one way or the other; settled outcomes stay.
    const status = initial === 'PENDING' && r.version > 0 ? r.ver.pickWeighted([['SUCCESS', 4], ['FAILED', 1]] as const) : initial;
    const settled = status === 'SUCCESS' && r.base.chance(0.8);
    // Paid between creation and the last update, whichever version this is.
    const paidMs = sinceCreated(r);
    return {
      id: r.id, lender_id: r.lenderId, borrower_id: parentId(r, 5), card_fingerprint: r.base.digits(16),
      public_id: ownUuid(r, 'D07'),
      amount,
      settled_amount: settled ? amount : 0,
      payment_type: 'PAID_TO_LENDER',
      payment_status: status,
      is_settled: settled,
      paid_before_submission: r.base.chance(0.08),
      paid_date: status === 'FAILED' ? null : isoUtc(paidMs),
      failure_reason: status === 'FAILED' ? 'INSUFFICIENT_FUNDS' : null,
      ...r.stamps,
    };
  },
  D08: (r) => {
    const count = r.base.pick([3, 6, 9, 12, 18, 24]);
    return {
      id: r.id, lender_id: r.lenderId, public_id: ownUuid(r, 'D08'),
      borrower_public_id: String(parentId(r, 2)),
      plan_type: r.base.pickWeighted([['INSTALLMENT', 4], ['SETTLEMENT', 1]] as const),
      status: r.version === 0 ? 'ACTIVE' : r.ver.pickWeighted([['ACTIVE', 5], ['COMPLETED', 2], ['BROKEN', 2], ['CANCELLED', 1]] as const),
      total_amount: count * r.base.int(10, 300) * 10,
      installment_count: count,
      frequency: r.base.pickWeighted([['MONTHLY', 6], ['BIWEEKLY', 2], ['WEEKLY', 1]] as const),
      start_date: isoDate(r.createdMs + r.base.int(1, 30) * DAY),
      ...r.stamps,
    };
  },
  D09: (r) => {
    const paid = r.version > 0 ? r.ver.chance(0.7) : r.base.chance(0.5);
    return {
      id: r.id, lender_id: r.lenderId, public_id: ownUuid(r, 'D09'),
      payment_plan_public_id: ref(r, 'D08', parentId(r, 6)),
      installment_number: ((r.id - 1) % 6) + 1,
      amount: r.base.int(10, 300) * 10,
      due_date: isoDate(r.createdMs + r.base.int(-20, 40) * DAY),
      status: paid ? 'PAID' : r.base.pickWeighted([['PENDING', 3], ['MISSED', 1]] as const),
      paid_at: paid ? isoUtc(sinceCreated(r)) : null,
      ...r.stamps,
    };
  },
  D10: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: ownUuid(r, 'D10'),
    installment_public_id: ref(r, 'D09', parentId(r, 2)),
    from_status: 'PENDING', to_status: r.base.pickWeighted([['PAID', 3], ['MISSED', 1]] as const),
    ...r.stamps,
  }),
  D11: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: ownUuid(r, 'D11'),
    payment_plan_public_id: ref(r, 'D08', parentId(r, 2)),
    from_status: 'ACTIVE', to_status: r.base.pick(['COMPLETED', 'BROKEN', 'CANCELLED']),
    ...r.stamps,
  }),
  D12: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: ownUuid(r, 'D12'),
    payment_plan_public_id: ref(r, 'D08', parentId(r, 3)),
    amount: r.base.int(10, 800) * 10,
    scheduled_date: isoDate(r.createdMs + r.base.int(1, 45) * DAY),
    channel: r.base.pickWeighted([['CARD', 3], ['BANK_TRANSFER', 2], ['DIRECT_DEBIT', 1]] as const),
    status: r.version === 0 ? 'SCHEDULED' : r.ver.pickWeighted([['PROCESSED', 6], ['FAILED', 1], ['CANCELLED', 1]] as const),
    ...r.stamps,
  }),
  D13: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: ownUuid(r, 'D13'),
    scheduled_payment_public_id: ref(r, 'D12', parentId(r, 2)),
    event: r.base.pick(['CREATED', 'RESCHEDULED', 'PROCESSED', 'FAILED', 'CANCELLED']),
    ...r.stamps,
  }),
  D14: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: ownUuid(r, 'D14'), storage_key: `proofs/${r.base.digits(12)}`,
    payment_public_id: ref(r, 'D07', parentId(r, 1)),
    file_type: r.base.pickWeighted([['image/jpeg', 5], ['application/pdf', 3], ['image/png', 2]] as const),
    file_size_bytes: r.base.int(40_000, 4_000_000),
    status: r.version === 0 ? 'SUBMITTED' : r.ver.pickWeighted([['APPROVED', 4], ['REJECTED', 1]] as const),
    amount: r.base.int(5, 5_000) * 10,
    ip_address: ip(r.base),
    ...r.stamps,
  }),
  D15: (r) => {
    const balance = r.base.int(100, 20_000) * 10;
    const discount = r.base.pick([10, 15, 20, 25, 30, 40]);
    return {
      id: r.id, lender_id: r.lenderId,
      public_id: `STL-${permute48(r.id, tableKey(r.seed, r.tenantIndex, 'D15')).toString(36).toUpperCase().padStart(10, '0')}`,
      account_public_id: String(parentId(r, 3)),
      original_balance: balance,
      settlement_amount: Math.round((balance * (100 - discount)) / 100),
      discount_percent: discount,
      status: r.version === 0 ? 'OFFERED' : r.ver.pickWeighted([['ACCEPTED', 3], ['PAID', 3], ['EXPIRED', 2]] as const),
      expires_at: isoUtc(r.cursorMs + 14 * DAY),
      ...r.stamps,
    };
  },
  D16: (r) => {
    const firstDue = r.createdMs - r.base.int(30, 400) * DAY;
    return {
      id: r.id, lender_id: r.lenderId,
      public_id: `CASE-${permute48(caseNumber(r.id), tableKey(r.seed, r.tenantIndex, 'D16')).toString(16).toUpperCase().padStart(12, '0')}`,
      deal_stage: r.ver.pickWeighted([['NEW', 2], ['CONTACTED', 4], ['PROMISE_TO_PAY', 2], ['PAYING', 2], ['CLOSED', 1]] as const),
      priority: r.base.pick(['LOW', 'MEDIUM', 'HIGH']),
      assigned_team: r.base.pick(['early', 'mid', 'late', 'legal']),
      outstanding_amount: r.base.int(50, 30_000) * 10,
      currency: r.base.pickWeighted([['AED', 3], ['SAR', 2], ['BHD', 1]] as const),
      // Dropped from the export in v1.2; the raw record keeps them so the allowlist is tested.
      first_due_date_timestamp: Math.floor(firstDue / 1000),
      everReachedAttempted: r.base.chance(0.6),
      ...r.stamps,
    };
  },
  D17: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: String(r.id),
    deal_public_id: String(parentId(r, 4)),
    activity_type: r.base.pick(['CALL', 'SMS', 'EMAIL', 'WHATSAPP', 'NOTE']),
    outcome: r.base.pick(['REACHED', 'NO_ANSWER', 'PROMISE_TO_PAY', 'REFUSED', 'WRONG_NUMBER']),
    performed_by: r.base.chance(0.7) ? 'AGENT' : 'AUTOMATION',
    ...r.stamps,
  }),
  D18: (r) => {
    const field = r.base.pick(['deal_stage', 'priority', 'assigned_team']);
    return {
      id: r.id, lender_id: r.lenderId, public_id: String(r.id),
      deal_public_id: String(parentId(r, 3)),
      field_changed: field,
      old_value: field === 'priority' ? 'LOW' : 'NEW',
      new_value: field === 'priority' ? r.base.pick(['MEDIUM', 'HIGH']) : r.base.pick(['CONTACTED', 'PAYING', 'late']),
      ...r.stamps,
    };
  },
  D19: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: String(r.id),
    deal_public_id: String(parentId(r, 5)),
    activity_type: r.base.pick(['CALL', 'VISIT', 'EMAIL', 'LETTER']),
    agent_id: `AG-${r.base.int(100, 160)}`,
    duration_seconds: r.base.int(0, 1_800),
    ...r.stamps,
  }),
  D20: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: String(r.id), user_agent: 'Mozilla/5.0',
    deal_public_id: String(parentId(r, 2)),
    viewer_role: r.base.pick(['AGENT', 'SUPERVISOR', 'LENDER']),
    view_count: r.base.int(1, 5) + r.version,
    ip_address: ip(r.base),
    ...r.stamps,
  }),
  D21: (r) => {
    const channel = r.base.pick(CHANNELS);
    return {
      id: r.id, lender_id: r.lenderId, public_id: String(r.id), recipient: `+9715${r.base.digits(8)}`,
      channel,
      direction: r.base.chance(0.85) ? 'OUTBOUND' : 'INBOUND',
      template_code: `${channel.toLowerCase()}_reminder_${r.base.int(1, 6)}`,
      delivery_status: r.base.pickWeighted([['DELIVERED', 6], ['READ', 3], ['SENT', 2], ['FAILED', 1]] as const),
      ...r.stamps,
    };
  },
  D22: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: String(r.id),
    channel: r.base.pick(['WHATSAPP', 'EMAIL', 'SMS']),
    status: r.version === 0 ? r.base.pick(['OPEN', 'PENDING']) : r.ver.pick(['OPEN', 'PENDING', 'CLOSED']),
    message_count: r.base.int(1, 30) + r.version * 2,
    last_message_at: isoUtc(r.cursorMs - r.base.int(0, 3_600_000)),
    ...r.stamps,
  }),
  D23: (r) => ({
    id: r.id, lender_id: r.lenderId, public_id: String(r.id), notes: '(agent notes)',
    channel: r.base.pickWeighted([['VOICE', 5], ['WHATSAPP', 2], ['EMAIL', 1]] as const),
    agent_id: `AG-${r.base.int(100, 160)}`,
    outcome_code: r.base.pick(['PTP', 'RPC', 'NO_ANSWER', 'CALLBACK', 'DISPUTE', 'WRONG_PARTY']),
    duration_seconds: r.base.int(0, 900),
    notes_length: r.base.int(0, 400),
    ...r.stamps,
  }),
  D24: (r) => {
    const promise = r.base.chance(0.4);
    return {
      id: r.id, lender_id: r.lenderId, public_id: ownUuid(r, 'D24'),
      manual_communication_log_public_id: String(parentId(r, 1)),
      outcome: promise ? 'PROMISE_TO_PAY' : r.ver.pick(['CALLBACK', 'REFUSED', 'NO_ANSWER']),
      promise_amount: promise ? r.base.int(10, 2_000) * 10 : null,
      promise_date: promise ? isoDate(r.cursorMs + r.base.int(1, 14) * DAY) : null,
      ...r.stamps,
    };
  },
  D26: (r) => {
    const birthYear = r.base.int(1965, 2002);
    return {
      id: r.id, lender_id: r.lenderId, password_hash: `$2b$10$${r.base.digits(22)}`,
      public_id: ownUuid(r, 'D26'),
      role: r.base.pickWeighted([['AGENT', 6], ['SUPERVISOR', 2], ['ADMIN', 1], ['VIEWER', 1]] as const),
      first_name: r.base.pick(FIRST_NAMES),
      last_name: r.base.pick(LAST_NAMES),
      email: `user${r.id}@lender.example`,
      id_number: `784${birthYear}${r.base.digits(8)}`,
      passport_number: r.base.chance(0.7) ? `P${r.base.digits(8)}` : null,
      dob: `${birthYear}-${String(r.base.int(1, 12)).padStart(2, '0')}-${String(r.base.int(1, 28)).padStart(2, '0')}`,
      ip_address: ip(r.ver),
      is_active: r.version === 0 ? true : r.ver.chance(0.9),
      last_login_at: isoUtc(sinceCreated(r)),
      ...r.stamps,
    };
  },
};

export function generateRaw(code: GeneratedCode, r: RowContext): RawRecord {
  return GENERATORS[code](r);
}
