// The portfolio each tenant starts with: debtors with 1-3 accounts of 1-4
// sub-accounts, later partial and full payments, some withdrawals, a few disputes and
// do-not-contact flags. Pure and deterministic: the same (seed, tenant index, size) gives the
// same operations with the same timestamps, which are spread over DATA_SPAN in order so every
// start of the sandbox produces byte-identical records.
import { DATA_SPAN } from '../contracts.ts';
import { Rng } from '../../prng.ts';
import { mixSeed } from './seed-hash.ts';
import type { AccountInput, StatusUpdateInput } from './types.ts';

/** The seeded portfolio is capped: `--scale` also sizes the generated datasets, and at 1,000,000
 * rows a portfolio of the same size would make start-up take far longer than "seconds". */
export const MAX_SEEDED_SUB_ACCOUNTS = 20_000;

export type SeedOperation =
  | { readonly at: string; readonly kind: 'account'; readonly record: AccountInput }
  | { readonly at: string; readonly kind: 'status'; readonly record: StatusUpdateInput };

export function seededSubAccountCount(scale: number): number {
  return Math.max(0, Math.min(Math.floor(scale), MAX_SEEDED_SUB_ACCOUNTS));
}

const FIRST_NAMES_EN = ['James', 'Sarah', 'Daniel', 'Priya', 'Michael', 'Emma', 'Ravi', 'Olivia', 'David', 'Maria', 'John', 'Anna'];
const FIRST_NAMES_AR = ['Mohammed', 'Fatima', 'Ahmed', 'Aisha', 'Omar', 'Layla', 'Khalid', 'Noura', 'Yousef', 'Mariam', 'Hamad', 'Sara'];
const LAST_NAMES = ['Al Mansouri', 'Al Nahyan', 'Haddad', 'Khan', 'Smith', 'Sharma', 'Al Qahtani', 'Nasser', 'Fernandes', 'Al Hashimi', 'Brown', 'Rahman'];
const MERCHANTS = ['Noon', 'Amazon AE', 'Carrefour', 'Sharaf DG', 'Emirates NBD', 'Tabby Store', 'Careem', 'Jarir'];
const CITIES: Record<string, readonly string[]> = {
  ARE: ['Dubai', 'Abu Dhabi', 'Sharjah'],
  SAU: ['Riyadh', 'Jeddah', 'Dammam'],
  BHR: ['Manama', 'Muharraq'],
};
const NATIONALITY: Record<string, string> = { ARE: 'Emirati', SAU: 'Saudi', BHR: 'Bahraini' };

const CHANNELS = ['app', 'web', 'branch'];
const COUNTRIES = ['ARE', 'ARE', 'ARE', 'SAU', 'SAU', 'BHR'];
const ACCOUNTS_PER_DEBTOR = [1, 1, 1, 2, 2, 3];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

function ddmmyyyy(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCDate(), 2)}/${pad(d.getUTCMonth() + 1, 2)}/${d.getUTCFullYear()}`;
}

/** Cents as a decimal string with two places. */
function money(cents: number): string {
  return `${Math.floor(cents / 100)}.${pad(cents % 100, 2)}`;
}

type DebtorFields = Pick<
  AccountInput,
  'debtorCompanyId' | 'firstName' | 'lastName' | 'language' | 'idNumber' | 'passportNumber' | 'birthDate'
  | 'gender' | 'nationality' | 'phones' | 'emails' | 'addresses'
>;

function makeDebtor(rng: Rng, n: number): DebtorFields {
  const country = rng.pick(COUNTRIES);
  const language = rng.chance(0.4) ? 'ar' : 'en';
  const gender = rng.chance(0.5) ? 'male' : 'female';
  const firstName = rng.pick(language === 'ar' ? FIRST_NAMES_AR : FIRST_NAMES_EN);
  const lastName = rng.pick(LAST_NAMES);
  const birthYear = rng.int(1955, 2003);
  const birthDate = ddmmyyyy(Date.UTC(birthYear, rng.int(0, 11), rng.int(1, 28)));
  const idNumber = country === 'ARE' ? `784-${birthYear}-${rng.digits(7)}-${rng.digits(1)}` : `${country === 'SAU' ? 1 : 9}${rng.digits(9)}`;
  const phones: { number: string; type?: string }[] = [{ number: `+9715${rng.digits(8)}`, type: 'mobile' }];
  if (rng.chance(0.3)) phones.push({ number: `+9714${rng.digits(7)}`, type: 'work' });
  const slug = `${firstName}.${lastName}`.toLowerCase().replace(/[^a-z.]/g, '');
  const emails = rng.chance(0.85) ? [{ email: `${slug}${n}@example.com`, type: 'personal' }] : [];
  const addresses = rng.chance(0.8)
    ? [{
      externalId: `addr-${pad(n, 7)}`,
      street: `${rng.int(1, 400)} Street ${rng.int(1, 90)}`,
      city: rng.pick(CITIES[country] ?? []),
      area: `District ${rng.int(1, 30)}`,
      zip: rng.digits(5),
      country,
      type: 'home',
    }]
    : [];
  const debtor: Record<string, unknown> = {
    debtorCompanyId: `CUS-${pad(n, 7)}`, firstName, lastName, language, idNumber, birthDate, gender,
    nationality: NATIONALITY[country], phones, emails, addresses,
  };
  if (rng.chance(0.3)) debtor.passportNumber = `P${rng.digits(8)}`;
  return debtor as DebtorFields;
}

interface Draft {
  readonly t: number;
  readonly seq: number;
  readonly op: SeedOperation;
}

/** Operations in timestamp order; ties keep generation order, so a create precedes its updates. */
export function generateSeedPortfolio(seed: number, tenantIndex: number, subAccountCount: number): SeedOperation[] {
  const rng = new Rng(mixSeed(seed, tenantIndex));
  const drafts: Draft[] = [];
  const spanStart = Date.parse(DATA_SPAN.start);
  const spanMs = Date.parse(DATA_SPAN.end) - spanStart;
  const add = (t: number, op: DistributiveOmit<SeedOperation, 'at'>): void => {
    const at = new Date(spanStart + Math.floor(t * spanMs)).toISOString();
    drafts.push({ t, seq: drafts.length, op: { ...op, at } as SeedOperation });
  };

  let made = 0;
  for (let d = 1, a = 1; made < subAccountCount; d += 1) {
    const debtor = makeDebtor(rng, d);
    const accountCount = rng.pick(ACCOUNTS_PER_DEBTOR);
    let debtorStart = 1;
    let firstAccountId = '';
    for (let k = 0; k < accountCount && made < subAccountCount; k += 1, a += 1) {
      const t0 = rng.next() * 0.85;
      const accountId = `ACC-${pad(a, 7)}`;
      if (t0 < debtorStart) [debtorStart, firstAccountId] = [t0, accountId];
      const loanType = rng.int(1, 8);
      const merchant = rng.pick(MERCHANTS);
      const subs = Math.min(rng.int(1, 4), subAccountCount - made);
      for (let s = 1; s <= subs; s += 1, made += 1) {
        const principalCents = rng.int(100, 2_000_000);
        const fields: Record<string, unknown> = {
          ...debtor, status: 1, accountId, subAccountId: `${accountId}-${pad(s, 2)}`,
          principal: money(principalCents), loanType, merchant,
          dateDue: ddmmyyyy(spanStart + t0 * spanMs + s * 30 * 86_400_000),
        };
        if (rng.chance(0.5)) fields.interest = money(Math.floor(principalCents * 0.05));
        if (rng.chance(0.2)) fields.fees = money(rng.int(1000, 15000));
        if (rng.chance(0.3)) fields.additionalData = { productType: `product-${loanType}`, channel: rng.pick(CHANNELS) };
        const create = fields as unknown as AccountInput;
        add(t0, { kind: 'account', record: create });
        // A withdrawal comes after any payment, so the payment never revives a withdrawn debt.
        let last = t0;
        const later = (): number => (last += rng.next() * (1 - last));
        if (rng.chance(0.35)) {
          const t = later();
          const paid = rng.chance(0.25) ? principalCents : rng.int(1, principalCents - 1);
          const paidDate = ddmmyyyy(spanStart + t * spanMs);
          add(t, { kind: 'account', record: { ...create, status: 2, paidAmount: money(paid), paidDate } });
        }
        if (rng.chance(0.08)) add(later(), { kind: 'account', record: { ...create, status: 3 } });
      }
      if (rng.chance(0.03)) add(t0 + rng.next() * (1 - t0), { kind: 'status', record: { status: 5, debtorCompanyId: debtor.debtorCompanyId, accountId } });
    }
    if (rng.chance(0.015)) {
      add(debtorStart + rng.next() * (1 - debtorStart), {
        kind: 'status', record: { status: 6, debtorCompanyId: debtor.debtorCompanyId, accountId: firstAccountId },
      });
    }
  }
  drafts.sort((x, y) => x.t - y.t || x.seq - y.seq);
  return drafts.map((draft) => draft.op);
}
