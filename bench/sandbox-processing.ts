// Processing throughput of the sandbox's accounts half (processing must keep up): pushes
// 100,000 sub-account records in batches of 1,000 over HTTPS to an in-process sandbox, waits for
// the background queue to drain, checks every record was applied, and prints one JSON line.
//
//   node --import tsx bench/sandbox-processing.ts [--records N] [--batch N] [--concurrency N]
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { startSandbox } from '../src/sandbox/index.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '4' },
  },
});
const total = Number(values.records);
const batchSize = Number(values.batch);
const concurrency = Number(values.concurrency);

function record(i: number): Record<string, unknown> {
  // Four sub-accounts per account and two accounts per debtor, so the aggregate and debtor paths
  // are exercised as in a real portfolio; a quarter carry a partial payment.
  const account = Math.floor(i / 4);
  const debtor = Math.floor(account / 2);
  const r: Record<string, unknown> = {
    status: 1,
    debtorCompanyId: `BENCH-C-${debtor}`,
    firstName: 'Bench',
    lastName: `Debtor ${debtor}`,
    language: debtor % 3 === 0 ? 'ar' : 'en',
    phones: [{ number: `+97150${String(debtor).padStart(7, '0')}`, type: 'mobile' }],
    emails: [{ email: `bench${debtor}@example.com` }],
    addresses: [{ city: 'Dubai', country: 'ARE' }],
    birthDate: '15/06/1988',
    accountId: `BENCH-A-${account}`,
    subAccountId: `BENCH-A-${account}-${i % 4}`,
    principal: `${1000 + (i % 997)}.50`,
    dateDue: '01/03/2026',
    loanType: (i % 8) + 1,
  };
  if (i % 4 === 0) r.paidAmount = '250.25';
  return r;
}

const sandbox = await startSandbox({ scale: 20 });
const agent = new Agent({ connect: { ca: sandbox.ca } });
try {
  const { email, password } = sandbox.credentials('demo');
  const post = async (path: string, body: unknown, token?: string): Promise<{ status: number; json: any }> => {
    const res = await request(`${sandbox.authUrl}${path}`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.statusCode, json: await res.body.json() };
  };
  const login = await post('/admin/auth/demo/login', { email, password });
  if (login.status !== 200) throw new Error(`login answered ${login.status}`);
  const { token, lenderPublicId } = login.json as { token: string; lenderPublicId: string };

  // Bodies are built before the clock starts: the figure is the sandbox's, not the generator's.
  const bodies: string[] = [];
  for (let start = 0; start < total; start += batchSize) {
    const accounts = [];
    for (let i = start; i < Math.min(total, start + batchSize); i += 1) accounts.push(record(i));
    bodies.push(JSON.stringify({ accounts }));
  }
  const before = sandbox.stats().accountsProcessed;

  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next++] as string;
      const res = await request(`${sandbox.baseUrl}/lenders/${lenderPublicId}/accounts`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`push answered ${res.statusCode}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const pushedMs = performance.now() - started;
  const drained = await post('/__sandbox/drain', {});
  const elapsedMs = performance.now() - started;
  if (drained.status !== 200) throw new Error(`drain answered ${drained.status}`);

  const applied = sandbox.stats().accountsProcessed - before;
  if (applied !== total) throw new Error(`applied ${applied} records, expected ${total}`);
  console.log(JSON.stringify({
    bench: 'sandbox-processing',
    records: total,
    batchSize,
    concurrency,
    recordsPerSecond: Math.round(total / (elapsedMs / 1000)),
    pushMs: Math.round(pushedMs),
    totalMs: Math.round(elapsedMs),
    node: process.version,
  }));
} finally {
  await agent.close();
  await sandbox.close();
}
