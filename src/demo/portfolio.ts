// The sample portfolio the demo pushes: debtors with accounts and sub-accounts, later payments
// (status 2), a few withdrawals (status 3), and records that are deliberately invalid in ways a
// lender's export really goes wrong (a thousands separator in an amount, "UAE" for the country,
// 31 February). Pure and deterministic: the same size always gives the same records, so a second
// demo run pushes the same portfolio again and the sandbox only restamps it.
import { Rng } from '../prng.ts';

/** An Account object of the accounts endpoint as a lender's system would produce it; some are invalid on purpose. */
export type SampleRecord = Record<string, unknown>;

export interface SamplePortfolio {
  records: SampleRecord[];
  /** How many of `records` were made invalid, by the defect applied. */
  invalid: Record<string, number>;
  /** A debtor with several accounts, to flag do-not-contact (covers all of its accounts). */
  doNotContact: { debtorCompanyId: string; accountId: string; accounts: number };
  /** One account of another debtor, to flag disputed. */
  disputed: { debtorCompanyId: string; accountId: string };
}

export const DEFAULT_PORTFOLIO_SIZE = 3000;
const SEED = 20260611;

// Share of the portfolio per kind of record; the rest are creates.
const UPDATE_SHARE = 0.12;
const WITHDRAW_SHARE = 0.03;
const INVALID_SHARE = 0.03;

const FIRST_EN = ['James', 'Sarah', 'Daniel', 'Priya', 'Michael', 'Emma', 'Ravi', 'Olivia', 'David', 'Maria'];
const FIRST_AR = ['Mohammed', 'Fatima', 'Ahmed', 'Aisha', 'Omar', 'Layla', 'Khalid', 'Noura', 'Yousef', 'Mariam'];
const LAST = ['Al Mansouri', 'Haddad', 'Khan', 'Smith', 'Sharma', 'Al Qahtani', 'Nasser', 'Fernandes', 'Rahman'];
const MERCHANTS = ['Noon', 'Carrefour', 'Sharaf DG', 'Tabby Store', 'Careem', 'Jarir'];
const CITIES: Record<string, string[]> = { ARE: ['Dubai', 'Abu Dhabi', 'Sharjah'], SAU: ['Riyadh', 'Jeddah'], BHR: ['Manama'] };
const COUNTRIES = ['ARE', 'ARE', 'ARE', 'SAU', 'SAU', 'BHR'];
const PRODUCTS = ['bnpl', 'card', 'personal-loan', 'auto-lease', 'salary-advance'];

/** Each defect breaks one field the way real source data does, and names the resulting error. */
const DEFECTS: { name: string; apply(r: SampleRecord): void }[] = [
  { name: 'missing firstName', apply: (r) => void delete r.firstName },
  { name: 'amount with a thousands separator', apply: (r) => void (r.principal = '1,250.00') },
  { name: 'impossible birth date', apply: (r) => void (r.birthDate = '31/02/1990') },
  { name: 'country not alpha-3', apply: (r) => void (r.addresses = [{ city: 'Dubai', country: 'UAE', type: 'home' }]) },
  { name: 'unknown language', apply: (r) => void (r.language = 'fr') },
  { name: 'loanType out of range', apply: (r) => void (r.loanType = 9) },
  { name: 'phone without a number', apply: (r) => void (r.phones = [{ type: 'mobile' }]) },
];

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

function ddmmyyyy(year: number, month: number, day: number): string {
  return `${pad(day, 2)}/${pad(month, 2)}/${year}`;
}

function money(cents: number): string {
  return `${Math.floor(cents / 100)}.${pad(cents % 100, 2)}`;
}

/** Builds the portfolio: `size` records in the order they are pushed. */
export function samplePortfolio(size = DEFAULT_PORTFOLIO_SIZE): SamplePortfolio {
  if (!Number.isInteger(size) || size < 20) throw new RangeError(`the sample portfolio needs at least 20 records, got ${size}`);
  const rng = new Rng(SEED);
  const rnd = (): number => rng.next();
  const int = (min: number, max: number): number => min + Math.floor(rnd() * (max - min + 1));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T;

  const updates = Math.round(size * UPDATE_SHARE);
  const withdrawals = Math.round(size * WITHDRAW_SHARE);
  const invalidCount = Math.max(DEFECTS.length, Math.round(size * INVALID_SHARE));
  const creates = size - updates - withdrawals - invalidCount;

  const created: SampleRecord[] = [];
  const accountsOf = new Map<string, string[]>();
  for (let d = 1; created.length < creates; d += 1) {
    const debtorCompanyId = `DEMO-C-${pad(d, 5)}`;
    const country = pick(COUNTRIES);
    const language = rnd() < 0.4 ? 'ar' : 'en';
    const firstName = pick(language === 'ar' ? FIRST_AR : FIRST_EN);
    const lastName = pick(LAST);
    const year = int(1958, 2002);
    const debtor: SampleRecord = {
      debtorCompanyId, firstName, lastName, language,
      idNumber: country === 'ARE' ? `784-${year}-${pad(int(0, 9_999_999), 7)}-${int(0, 9)}` : `${int(1, 2)}${pad(int(0, 999_999_999), 9)}`,
      birthDate: ddmmyyyy(year, int(1, 12), int(1, 28)),
      gender: rnd() < 0.5 ? 'male' : 'female',
      nationality: country,
      phones: [{ number: `+9715${pad(int(0, 99_999_999), 8)}`, type: 'mobile' }],
      emails: [{ email: `${firstName}.${lastName}`.toLowerCase().replace(/[^a-z.]/g, '') + `${d}@example.com`, type: 'personal' }],
      addresses: [{ externalId: `demo-addr-${pad(d, 5)}`, street: `${int(1, 300)} Street ${int(1, 80)}`, city: pick(CITIES[country] ?? ['Dubai']), country, type: 'home' }],
    };
    const accounts = rnd() < 0.6 ? 1 : rnd() < 0.7 ? 2 : 3;
    for (let a = 1; a <= accounts && created.length < creates; a += 1) {
      const accountId = `DEMO-A-${pad(d, 5)}-${a}`;
      const list = accountsOf.get(debtorCompanyId) ?? [];
      list.push(accountId);
      accountsOf.set(debtorCompanyId, list);
      const loanType = int(1, 8);
      const merchant = pick(MERCHANTS);
      const subs = int(1, 4);
      for (let s = 1; s <= subs && created.length < creates; s += 1) {
        const record: SampleRecord = {
          status: 1, ...structuredClone(debtor), accountId, subAccountId: `${accountId}-${pad(s, 2)}`,
          merchant, loanType,
          dateDue: ddmmyyyy(2026, int(1, 12), int(1, 28)),
          principal: money(int(5_000, 2_500_000)),
          interest: money(int(0, 50_000)),
          fees: money(int(0, 10_000)),
          additionalData: { productType: pick(PRODUCTS), installment: s },
        };
        if (rnd() < 0.25) {
          record.paidAmount = money(int(100, 4_000));
          record.paidDate = ddmmyyyy(2026, int(1, 10), int(1, 28));
        }
        created.push(record);
      }
    }
  }

  // Later changes to existing sub-accounts: a payment, or the lender withdrawing the obligation.
  const later: SampleRecord[] = [];
  for (let i = 0; i < updates; i += 1) {
    const base = pick(created);
    const principal = Number(base.principal);
    later.push({ ...structuredClone(base), status: 2, paidAmount: money(int(1, Math.max(1, Math.floor(principal * 100)))), paidDate: ddmmyyyy(2026, int(1, 10), int(1, 28)) });
  }
  for (let i = 0; i < withdrawals; i += 1) later.push({ ...structuredClone(pick(created)), status: 3 });

  // Invalid records are extra sub-accounts (their own ids), so the valid data stays consistent
  // whether or not a defective copy is rejected.
  const invalid: Record<string, number> = {};
  const broken: SampleRecord[] = [];
  for (let i = 0; i < invalidCount; i += 1) {
    const defect = DEFECTS[i % DEFECTS.length]!;
    const record = structuredClone(pick(created));
    record.subAccountId = `${String(record.accountId)}-X${pad(i + 1, 3)}`;
    defect.apply(record);
    invalid[defect.name] = (invalid[defect.name] ?? 0) + 1;
    broken.push(record);
  }

  // Defective records are scattered through the creates, as they would be in a real export.
  const records = [...created];
  for (const record of broken) records.splice(int(0, records.length), 0, record);
  records.push(...later);

  const [dncDebtor, dncAccounts] = [...accountsOf].find(([, list]) => list.length >= 2) ?? [...accountsOf][0]!;
  const [disputedDebtor, disputedAccounts] = [...accountsOf].find(([id]) => id !== dncDebtor) ?? [dncDebtor, dncAccounts];
  return {
    records,
    invalid,
    doNotContact: { debtorCompanyId: dncDebtor, accountId: dncAccounts[0]!, accounts: dncAccounts.length },
    disputed: { debtorCompanyId: disputedDebtor, accountId: disputedAccounts[0]! },
  };
}
