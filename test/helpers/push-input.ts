// A deterministic portfolio for push scenarios (chaos push, soak): NDJSON lines of creates, later
// updates and withdrawals of some of them, and invalid records of known kinds, together with what
// the sandbox must hold afterwards. Amounts carry two decimals so the expected balance string is
// exact (the service keeps the larger scale of principal and paidAmount).
import { prng } from './resilience.ts';

export type InvalidKind =
  | 'missing-firstName' | 'bad-principal' | 'bad-status' | 'bad-date' | 'bad-language'
  | 'not-an-object' | 'malformed-json' | 'bad-country'
  // Passes the client's schema (which deliberately does not judge email syntax) and is refused
  // by the service's 400: exercises the writer's resend of the rest of the batch.
  | 'server-bad-email';

const CLIENT_KINDS: readonly InvalidKind[] = [
  'missing-firstName', 'bad-principal', 'bad-status', 'bad-date', 'bad-language', 'not-an-object', 'malformed-json', 'bad-country',
];

export interface ExpectedSubAccount {
  accountId: string;
  balance: string;
  status: 'active' | 'withdrawn';
}

export interface PushInput {
  /** NDJSON text, one record per line. */
  text: string;
  lines: number;
  /** Records the service must accept (creates, updates, withdrawals). */
  validCount: number;
  /** 1-based line -> kind of each invalid line. */
  invalid: Map<number, InvalidKind>;
  /** subAccountId -> its final state. */
  expected: Map<string, ExpectedSubAccount>;
}

function cents(n: number): string {
  return `${Math.floor(n / 100)}.${String(n % 100).padStart(2, '0')}`;
}

function pad(n: number, width = 6): string {
  return String(n).padStart(width, '0');
}

/** `prefix` keeps runs apart in one sandbox (ids are upserted per lender). */
export function generatePushInput(count: number, seed: number, prefix = 'RES', invalidRate = 0.06): PushInput {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const lines: string[] = [];
  const invalid = new Map<number, InvalidKind>();
  const expected = new Map<string, ExpectedSubAccount & { principal: number }>();
  const created: string[] = [];
  let validCount = 0;

  const base = (i: number) => {
    const principal = 1000 + Math.floor(random() * 5_000_000);
    return {
      status: 1,
      debtorCompanyId: `${prefix}-C${pad(i % 997)}`,
      firstName: pick(['Aisha', 'Omar', 'Layla', 'Yusuf', 'Mariam']),
      lastName: pick(['Haddad', 'Khan', 'Saleh', 'Nasser']),
      language: pick(['en', 'ar']),
      birthDate: `${pad(1 + Math.floor(random() * 28), 2)}/${pad(1 + Math.floor(random() * 12), 2)}/${1950 + Math.floor(random() * 50)}`,
      phones: [{ number: `+9715${pad(Math.floor(random() * 1e7), 7)}`, type: 'mobile' }],
      emails: [{ email: `user${i}@example.com`, type: 'personal' }],
      addresses: [{ city: 'Dubai', country: 'ARE', type: 'home' }],
      accountId: `${prefix}-A${pad(i)}`,
      subAccountId: `${prefix}-A${pad(i)}-01`,
      dateDue: '15/03/2026',
      principal: cents(principal),
      paidAmount: cents(Math.floor(random() * principal)),
      loanType: 1 + Math.floor(random() * 8),
      additionalData: { productType: 'resilience', seq: i },
      __principal: principal,
    };
  };

  for (let i = 0; i < count; i++) {
    const line = lines.length + 1;
    if (random() < invalidRate) {
      // One in four invalid records is one only the service can see.
      const kind: InvalidKind = random() < 0.25 ? 'server-bad-email' : pick(CLIENT_KINDS);
      invalid.set(line, kind);
      const r: Record<string, unknown> = base(i);
      delete r.__principal;
      // Its own account: a 400 rejects every record of the accountId it names.
      r.accountId = `${prefix}-BAD${pad(i)}`;
      r.subAccountId = `${prefix}-BAD${pad(i)}-01`;
      switch (kind) {
        case 'missing-firstName': delete r.firstName; break;
        case 'bad-principal': r.principal = pick(['abc', '1e5', '', '12,50', ' 10']); break;
        case 'bad-status': r.status = pick([0, 4, 7, '1x']); break;
        case 'bad-date': r.birthDate = pick(['31/02/2024', '32/01/2024', '1/1/2020', '00/00/0000']); break;
        case 'bad-language': r.language = pick(['fr', 'EN', 'english']); break;
        case 'bad-country': r.addresses = [{ city: 'X', country: pick(['UAE', 'XX', 'ZZZ']) }]; break;
        case 'server-bad-email': r.emails = [{ email: pick(['not-an-email', 'a@', '@b.com', 'x y@z.com']) }]; break;
        case 'not-an-object': lines.push(pick(['42', '"text"', '[1,2]', 'null', 'true'])); continue;
        case 'malformed-json': lines.push(JSON.stringify(r).slice(0, 20 + Math.floor(random() * 40))); continue;
      }
      lines.push(JSON.stringify(r));
      continue;
    }
    if (created.length > 10 && random() < 0.12) {
      // A later change of an earlier sub-account: update its paidAmount or withdraw it.
      const sub = pick(created);
      const state = expected.get(sub)!;
      const idx = Number(state.accountId.slice(prefix.length + 2));
      const r: Record<string, unknown> = base(idx);
      delete r.__principal;
      r.principal = cents(state.principal);
      const paid = Math.floor(random() * state.principal);
      r.paidAmount = cents(paid);
      if (random() < 0.3) {
        // A withdrawal keeps the sub-account's last values; only its status changes.
        r.status = 3;
        state.status = 'withdrawn';
      } else {
        // An update sets the new values and makes a withdrawn sub-account active again.
        r.status = 2;
        state.status = 'active';
        state.balance = cents(state.principal - paid);
      }
      lines.push(JSON.stringify(r));
      validCount += 1;
      continue;
    }
    const r = base(i);
    const principal = r.__principal;
    const rec: Record<string, unknown> = { ...r };
    delete rec.__principal;
    const paid = Math.round(Number(r.paidAmount) * 100);
    expected.set(r.subAccountId, { accountId: r.accountId, balance: cents(principal - paid), status: 'active', principal });
    created.push(r.subAccountId);
    lines.push(JSON.stringify(rec));
    validCount += 1;
  }
  const plain = new Map<string, ExpectedSubAccount>();
  for (const [k, v] of expected) plain.set(k, { accountId: v.accountId, balance: v.balance, status: v.status });
  return { text: lines.join('\n') + '\n', lines: lines.length, validCount, invalid, expected: plain };
}
