// Shapes shared by the accounts half: validated inputs (what the queue carries) and the error
// entries of a 400 from the accounts endpoint.

export type AccountOperation = 1 | 2 | 3;

export interface PhoneInput {
  readonly number: string;
  readonly type?: string;
}

export interface EmailInput {
  readonly email: string;
  readonly type?: string;
}

export type AddressInput = Readonly<Record<string, string>>;

/** One validated Account object; unknown fields are dropped, absent optional fields stay absent. */
export interface AccountInput {
  readonly status: AccountOperation;
  readonly debtorCompanyId: string;
  readonly accountId: string;
  readonly subAccountId: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly language: string;
  readonly principal: string;
  readonly idNumber?: string;
  readonly emiratesId?: string;
  readonly passportNumber?: string;
  readonly birthDate?: string;
  readonly gender?: string;
  readonly nationality?: string;
  readonly phones?: readonly PhoneInput[];
  readonly emails?: readonly EmailInput[];
  readonly addresses?: readonly AddressInput[];
  readonly merchant?: string;
  readonly dateDue?: string;
  readonly interest?: string;
  readonly fees?: string;
  readonly paidAmount?: string;
  readonly paidDate?: string;
  readonly additionalData?: Readonly<Record<string, unknown>>;
  readonly loanType?: number;
}

export type FlagOperation = 5 | 6;

export interface StatusUpdateInput {
  readonly status: FlagOperation;
  readonly debtorCompanyId: string;
  readonly accountId: string;
}

/** One element of the 400 `errors` array. */
export interface AccountErrorEntry {
  readonly accountId: string;
  readonly errors: readonly string[];
}

export type Validated<T> =
  | { readonly ok: true; readonly records: readonly T[] }
  | { readonly ok: false; readonly errors: readonly AccountErrorEntry[] };
