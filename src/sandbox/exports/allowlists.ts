// The fields each dataset exports, in output order. D07's list is exactly the documented one; the
// others are the sandbox's plausible choice (no fields are documented beyond the shared rules).
// A field named id_number, passport_number, dob, ip_address or phones is masked by redact.ts.
import type { DatasetCode } from '../../core/catalog.ts';

const UPDATED = ['created_at', 'updated_at'] as const;
const CREATED = ['created_at'] as const;
const COMMUNICATED = ['communicated_at', 'created_at'] as const;

export const ALLOWLISTS: Readonly<Record<DatasetCode, readonly string[]>> = {
  D01: [
    'public_id', 'debtor_company_id', 'first_name', 'last_name', 'preferred_language', 'id_number',
    'passport_number', 'dob', 'gender', 'nationality', 'phones', 'addresses', 'do_not_contact', ...UPDATED,
  ],
  D02: [
    'public_id', 'debtor_company_id', 'account_id', 'loan_type', 'merchant', 'outstanding_balance',
    'sub_account_count', 'active_sub_account_count', 'status', 'disputed', 'do_not_contact', ...UPDATED,
  ],
  D03: [
    'public_id', 'debtor_company_id', 'account_id', 'sub_account_id', 'principal', 'interest', 'fees',
    'paid_amount', 'paid_date', 'date_due', 'balance', 'status', 'loan_type', 'merchant', ...UPDATED,
  ],
  D04: ['public_id', 'account_public_id', 'change_type', 'amount_delta', 'balance_after', ...CREATED],
  D05: ['public_id', 'event_type', 'debtor_company_id', 'account_id', 'sub_account_id', ...CREATED],
  D06: ['public_id', 'borrower_public_id', 'attribute_key', 'old_value', 'new_value', ...CREATED],
  D07: [
    'public_id', 'amount', 'settled_amount', 'payment_type', 'payment_status', 'is_settled',
    'paid_before_submission', 'paid_date', 'failure_reason', ...UPDATED,
  ],
  D08: [
    'public_id', 'borrower_public_id', 'plan_type', 'status', 'total_amount', 'installment_count',
    'frequency', 'start_date', ...UPDATED,
  ],
  D09: ['public_id', 'payment_plan_public_id', 'installment_number', 'amount', 'due_date', 'status', 'paid_at', ...UPDATED],
  D10: ['public_id', 'installment_public_id', 'from_status', 'to_status', ...CREATED],
  D11: ['public_id', 'payment_plan_public_id', 'from_status', 'to_status', ...CREATED],
  D12: ['public_id', 'payment_plan_public_id', 'amount', 'scheduled_date', 'channel', 'status', ...UPDATED],
  D13: ['public_id', 'scheduled_payment_public_id', 'event', ...CREATED],
  D14: ['public_id', 'payment_public_id', 'file_type', 'file_size_bytes', 'status', 'amount', 'ip_address', ...UPDATED],
  D15: [
    'public_id', 'account_public_id', 'original_balance', 'settlement_amount', 'discount_percent', 'status',
    'expires_at', ...UPDATED,
  ],
  D16: ['public_id', 'deal_stage', 'priority', 'assigned_team', 'outstanding_amount', 'currency', ...UPDATED],
  D17: ['public_id', 'deal_public_id', 'activity_type', 'outcome', 'performed_by', ...CREATED],
  D18: ['public_id', 'deal_public_id', 'field_changed', 'old_value', 'new_value', ...CREATED],
  D19: ['public_id', 'deal_public_id', 'activity_type', 'agent_id', 'duration_seconds', ...CREATED],
  D20: ['public_id', 'deal_public_id', 'viewer_role', 'view_count', 'ip_address', ...UPDATED],
  D21: ['public_id', 'channel', 'direction', 'template_code', 'delivery_status', ...COMMUNICATED],
  D22: ['public_id', 'channel', 'status', 'message_count', 'last_message_at', ...UPDATED],
  D23: ['public_id', 'channel', 'agent_id', 'outcome_code', 'duration_seconds', 'notes_length', ...COMMUNICATED],
  D24: ['public_id', 'manual_communication_log_public_id', 'outcome', 'promise_amount', 'promise_date', ...UPDATED],
  D26: [
    'public_id', 'role', 'first_name', 'last_name', 'id_number', 'passport_number', 'dob', 'ip_address',
    'is_active', 'last_login_at', ...UPDATED,
  ],
};

/** Allowlists of object arrays inside a row. */
export const NESTED_ALLOWLISTS: Partial<Record<DatasetCode, Readonly<Record<string, readonly string[]>>>> = {
  D01: { addresses: ['city', 'area', 'country', 'type'] },
};
