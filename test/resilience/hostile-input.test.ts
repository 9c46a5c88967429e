// Hostile input: what users and files can throw at the product. Account records
// fuzzed through the schema and the writer; hostile NDJSON/JSON files through real `lender push`
// children (each bounded by a time limit); random command lines to every command; dates. The
// rule everywhere: no crash, no stack trace, no hang, a clear message, and the counts add up.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createAccountWriter } from '../../src/accounts/account-writer.ts';
import { validateAccount, validateStatusUpdate, isServiceDate } from '../../src/accounts/schema.ts';
import { main } from '../../src/cli/main.ts';
import { LenderClient } from '../../src/client/client.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import { SOAK, SecretScan, isolatedEnv, runLender, runSeed, type RunResult } from '../helpers/resilience.ts';
import { memoryIo } from '../helpers/memory-io.ts';

const RUNS = SOAK ? 2000 : 300;
const STACK = /\n\s+at .+(:\d+:\d+|\(native\))/;

function validRecord(i: number): Record<string, unknown> {
  return {
    status: 1, debtorCompanyId: `HOST-C${i}`, firstName: 'Aisha', lastName: 'Haddad', language: 'en',
    birthDate: '01/02/1980', phones: [{ number: '+971500000000', type: 'mobile' }],
    accountId: `HOST-A${i}`, subAccountId: `HOST-A${i}-01`, dateDue: '15/03/2026', principal: '100.00',
    paidAmount: '10.00', loanType: 1,
  };
}

/** A valid record whose firstName holds bytes that are not UTF-8 (a lone 0xff, a bad
 * continuation, an encoded surrogate). */
function invalidUtf8Line(): Buffer {
  const [head, tail] = JSON.stringify({ ...validRecord(4), firstName: '@@' }).split('@@') as [string, string];
  return Buffer.concat([Buffer.from(head), Buffer.from([0x41, 0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from(`${tail}\n`)]);
}

/** Records that are valid, then have one field replaced by anything at all. */
const mutatedRecord = fc.tuple(
  fc.nat(1_000_000),
  fc.constantFrom('status', 'debtorCompanyId', 'firstName', 'lastName', 'language', 'birthDate', 'phones', 'emails',
    'addresses', 'accountId', 'subAccountId', 'dateDue', 'principal', 'interest', 'fees', 'paidAmount', 'paidDate',
    'additionalData', 'loanType', 'gender', '__proto__', 'constructor'),
  fc.oneof(fc.anything(), fc.string({ unit: 'binary' }), fc.date(), fc.double(), fc.constant(undefined), fc.constant(null)),
).map(([i, field, value]) => {
  const r = validRecord(i);
  Object.defineProperty(r, field, { value, enumerable: true, configurable: true, writable: true });
  return r;
});


/** Runs `lender ...argv` in this process, bounded: a hang fails the test instead of the suite. */
async function runMain(argv: string[], env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<{ code: number; out: string; err: string }> {
  const controller = new AbortController();
  const io = memoryIo(env, controller.signal);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`lender ${argv.join(' ')} did not finish in ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    const code = await Promise.race([main(argv, io), timeout]);
    return { code, out: io.out(), err: io.err() };
  } finally {
    clearTimeout(timer);
  }
}

describe('hostile input', () => {
  let t: TestSandbox;
  let dir: string;
  let sandboxEnv: NodeJS.ProcessEnv;
  const seed = runSeed();
  const scan = new SecretScan();
  const figures: Record<string, number> = {};

  before(async () => {
    t = await startTestSandbox({ seed: 3, scale: 50 });
    dir = await mkdtemp(join(tmpdir(), 'lender-hostile-'));
    const c = t.sandbox.credentials('demo');
    for (const l of t.sandbox.lenders) scan.secret(l.password);
    sandboxEnv = isolatedEnv({
      LENDER_AUTH_URL: c.authUrl, LENDER_SUBDOMAIN: c.lender, LENDER_EMAIL: c.email, LENDER_PASSWORD: c.password,
      LENDER_CA_FILE: t.sandbox.caFile,
    });
  });

  after(async () => {
    await t?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('the account schema never throws: every input is accepted, or rejected with messages', (ctx) => {
    let accepted = 0;
    let rejected = 0;
    const check = (input: unknown) => {
      for (const strict of [false, true]) {
        const result = validateAccount(input, { strict });
        if (result.ok) {
          accepted += 1;
          assert.equal(typeof result.value, 'object');
        } else {
          rejected += 1;
          assert.ok(result.errors.length > 0);
          for (const e of result.errors) assert.ok(typeof e === 'string' && e.length > 3 && e.length < 500, `message: ${e}`);
        }
      }
      const flag = validateStatusUpdate(input);
      assert.ok(flag.ok || flag.errors.length > 0);
    };
    fc.assert(fc.property(fc.oneof(fc.anything(), mutatedRecord, fc.jsonValue()), check), { numRuns: RUNS * 4, seed });
    figures.schemaInputs = RUNS * 4;
    ctx.diagnostic(`seed=${seed} schema inputs=${RUNS * 4} (x2 modes) accepted=${accepted} rejected=${rejected}`);
  });

  it('dd/MM/yyyy dates are accepted exactly when they name a real calendar day', () => {
    const real = (d: number, m: number, y: number) => {
      const date = new Date(Date.UTC(2000, m - 1, d));
      date.setUTCFullYear(y);
      return y >= 1 && date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
    };
    const p2 = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 9999 }), (d, m, y) => {
        const text = `${p2(d)}/${p2(m)}/${String(y).padStart(4, '0')}`;
        assert.equal(isServiceDate(text), real(d, m, y), text);
        const r = validateAccount({ ...validRecord(1), birthDate: text });
        assert.equal(r.ok, real(d, m, y), `birthDate ${text}`);
      }),
      { numRuns: RUNS * 4, seed },
    );
    // A JS Date is a date whatever its time of day; it is normalised, not refused.
    fc.assert(
      fc.property(fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2199-12-31T23:59:59Z'), noInvalidDate: true }), (d) => {
        const r = validateAccount({ ...validRecord(1), dateDue: d });
        assert.ok(r.ok, `dateDue ${d.toISOString()}: ${r.ok ? '' : r.errors.join('; ')}`);
        assert.ok(isServiceDate((r.value as { dateDue: string }).dateDue));
      }),
      { numRuns: RUNS, seed },
    );
    figures.dates = RUNS * 5;
  });

  it('the writer accounts for every fuzzed record against the live sandbox (accepted + rejected = received)', async (ctx) => {
    const client = await LenderClient.login(t.sandbox.credentials('demo'));
    let received = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(mutatedRecord, fc.anything()), { minLength: 1, maxLength: 25 }), async (records) => {
          const writer = createAccountWriter(client, { batchSize: 10, flushInterval: 0 });
          const rejects: { errors: string[] }[] = [];
          writer.on('reject', (r) => rejects.push(r));
          // null cannot travel through an object stream at all (Node refuses it before the writer).
          const items = records.filter((r) => r !== null);
          await pipeline(Readable.from(items, { objectMode: true }), writer);
          const s = writer.summary;
          received += s.received;
          assert.equal(s.received, items.length);
          assert.equal(s.accepted + s.rejected, s.received);
          assert.equal(rejects.length, s.rejected);
          assert.ok(rejects.every((r) => r.errors.length > 0 && r.errors.every((e) => typeof e === 'string' && e !== '')));
          assert.equal(s.rejectedByReason.failed ?? 0, 0);
        }),
        { numRuns: SOAK ? 300 : 40, seed },
      );
    } finally {
      await client.close();
    }
    figures.writerRecords = received;
    ctx.diagnostic(`writer records=${received}`);
  });

  it('hostile files through lender push: exit 1 or 3 with a clear message, never a crash or a hang', async (ctx) => {
    const ok = JSON.stringify(validRecord(1));
    const cases: { name: string; data: string | Buffer; codes: number[] }[] = [
      { name: 'truncated NDJSON', data: `${ok}\n${ok.slice(0, 37)}`, codes: [3] },
      { name: 'binary garbage', data: Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)), codes: [1, 3] },
      { name: 'NUL bytes', data: Buffer.alloc(2048, 0), codes: [1, 3] },
      { name: 'deeply nested NDJSON line', data: `${ok}\n${'['.repeat(200_000)}${']'.repeat(200_000)}\n`, codes: [3] },
      { name: 'deeply nested JSON array element', data: `[${ok},${'['.repeat(100_000)}${']'.repeat(100_000)}]`, codes: [1, 3] },
      { name: 'deeply nested object field', data: `${JSON.stringify({ ...validRecord(2), additionalData: undefined }).slice(0, -1)},"additionalData":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}\n`, codes: [0, 1, 3] },
      { name: 'huge string field (8 MB)', data: `${JSON.stringify({ ...validRecord(3), firstName: 'x'.repeat(8 * 1024 * 1024) })}\n`, codes: [0, 1, 3] },
      { name: 'line longer than the limit (20 MB)', data: `"${'y'.repeat(20 * 1024 * 1024)}"\n${ok}\n`, codes: [3] },
      { name: 'invalid UTF-8 in a string', data: invalidUtf8Line(), codes: [0, 3] },
      { name: 'UTF-16LE file', data: Buffer.from(`\ufeff${ok}\n`, 'utf16le'), codes: [1, 3] },
      { name: 'truncated JSON array', data: `[${ok},${ok.slice(0, 50)}`, codes: [1] },
      { name: 'JSON wrapper with a non-array', data: '{"accounts": 5}', codes: [1, 3] },
      { name: 'JSON array of scalars', data: '[1, "two", null, true, [], {}]', codes: [3] },
      { name: 'JSON with trailing garbage', data: `[${ok}] trailing`, codes: [1, 3] },
      { name: 'a million empty-ish lines', data: '\n \n\t\n'.repeat(300_000), codes: [0] },
    ];
    const results: { name: string; run: RunResult; codes: number[] }[] = [];
    // Three children at a time: each is a whole Node process with tsx.
    const queue = [...cases];
    await Promise.all([0, 1, 2].map(async () => {
      for (let c = queue.shift(); c !== undefined; c = queue.shift()) {
        const file = join(dir, `${c.name.replace(/\W+/g, '-')}.input`);
        const rejects = `${file}.rejects`;
        await writeFile(file, c.data);
        const run = await runLender(['push', file, '--rejects', rejects], { env: sandboxEnv, timeoutMs: 90_000 });
        results.push({ name: c.name, run, codes: c.codes });
      }
    }));
    // Every case is judged before failing, so one run reports every broken input at once.
    const problems: string[] = [];
    const expect = (cond: boolean, what: string) => {
      if (!cond) problems.push(what);
    };
    for (const { name, run, codes } of results) {
      scan.captureRun(`push ${name}`, run);
      const err = run.stderr.slice(0, 300).replace(/\s+/g, ' ');
      expect(!run.timedOut, `${name}: hung`);
      expect(run.signal === null, `${name}: killed by ${run.signal}`);
      expect(codes.includes(run.code!), `${name}: exit ${run.code}, expected ${codes.join('/')}: ${err}`);
      expect(!STACK.test(run.stderr), `${name}: a stack trace on stderr`);
      expect(!/Error: |TypeError|RangeError|Maximum call stack/.test(run.stderr), `${name}: a raw error on stderr: ${err}`);
      // The summary line is always there and adds up, even when the input stopped early.
      let summary: { received: number; accepted: number; rejected: number } | null = null;
      try {
        summary = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? 'null');
      } catch {
        summary = null;
      }
      expect(summary !== null && summary.accepted + summary.rejected === summary.received, `${name}: no summary that adds up: ${run.stdout.slice(0, 200)}`);
      if (run.code === 1) expect(/^lender push: \S.{10,}/m.test(run.stderr), `${name}: exit 1 without a message`);
    }
    figures.hostileFiles = cases.length;
    ctx.diagnostic(results.map((r) => `${r.name}: exit ${r.run.code} in ${r.run.ms} ms`).join('; '));
    assert.deepEqual(problems, []);
  });

  it('random command lines: exit 2 (1 for an input file that cannot be read) with a one-line message, never a crash, a stack or a hang', async (ctx) => {
    // Values chosen to be wrong for the flag they follow, plus random text; never --help/--sandbox
    // (they succeed) and never a whole valid sandbox command line (it would serve forever).
    const flags = ['--limit', '--window', '--since', '--until', '--sort', '--out', '--datasets', '--state', '--format',
      '--batch-size', '--concurrency', '--port', '--seed', '--scale', '--latency', '--faults', '--token-ttl', '--churn',
      '--json', '--progress', '--strict', '--rejects', '--bogus', '-x', '--'];
    const values = ['-1', '0', '1e3', 'abc', '', ' ', 'D99', 'D07,,D99', '9999999999999999999', 'P-1D', 'month', 'asc',
      'sideways', '500=2', 'reset=-1', '../../etc', '\u0000', '💥', '--', '2026-13-45T99:99:99Z', 'NaN', 'Infinity',
      // Names every object has, which a lookup in a plain object would find.
      'toString', '__proto__', 'constructor=1'];
    const token = fc.oneof(fc.constantFrom(...flags), fc.constantFrom(...values), fc.string({ maxLength: 12 }).filter((s) => !s.startsWith('-h') && s !== '--help' && s !== '--sandbox'));
    const commands = ['catalog', 'export', 'sync', 'push', 'flag', 'sandbox', 'demo', 'nonsense', 'toString', '__proto__', ''];
    let cases = 0;
    const codes: Record<string, number> = {};
    // A file name with a NUL (one seed drew it) is a command-line mistake, not an unreadable file.
    for (const command of ['push', 'flag']) {
      const nul = await runMain([command, 'a\u0000b'], isolatedEnv());
      assert.equal(nul.code, 2, nul.err);
      assert.match(nul.err, new RegExp(`^lender ${command}: a file name cannot contain a NUL character\n`));
    }
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...commands), fc.array(token, { minLength: 1, maxLength: 6 }), async (command, args) => {
        if (args.some((a) => a === '--help' || a === '-h' || a === '--sandbox')) return;
        let argv = command === '' ? args : [command, ...args];
        // sandbox with valid options would serve until stopped: always give it one bad value.
        if (command === 'sandbox') argv = [...argv, '--port', 'not-a-port'];
        // demo runs the whole product; it takes no options, so give it one.
        if (command === 'demo') argv = [...argv, '--bogus-option'];
        if (argv[0] === undefined || argv[0].startsWith('-')) argv = ['nonsense', ...argv];
        cases += 1;
        const r = await runMain(argv, isolatedEnv());
        codes[r.code] = (codes[r.code] ?? 0) + 1;
        // A positional of push or flag is a file to read: one that is not there fails at run time.
        const unreadableInput = (argv[0] === 'push' || argv[0] === 'flag') &&
          /^lender (push|flag): (cannot read .* \(E[A-Z]+\)|.* is a directory, not a file of records)\n$/s.test(r.err);
        assert.equal(r.code, unreadableInput ? 1 : 2, `lender ${JSON.stringify(argv)} exited ${r.code}: ${r.err}`);
        assert.equal(r.out, '', `lender ${JSON.stringify(argv)} wrote to stdout`);
        assert.match(r.err, /^lender( [a-z]+)?: \S/, `lender ${JSON.stringify(argv)}: ${r.err}`);
        assert.doesNotMatch(r.err, STACK);
      }),
      { numRuns: SOAK ? 1500 : 250, seed },
    );
    figures.commandLines = cases;
    ctx.diagnostic(`command lines=${cases} exit codes=${JSON.stringify(codes)}`);
  });

  it('--since/--until values: invalid ones exit 2 with a message; valid instants bound the rows exactly', async (ctx) => {
    let valid = 0;
    let invalid = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.date({ min: new Date('2024-06-01T00:00:00Z'), max: new Date('2027-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
          fc.string({ maxLength: 30 }),
          fc.constantFrom('2026-02-30T00:00:00Z', '2026-13-01', 'yesterday', '0000-00-00', '2026-01-01T25:00:00Z', '+275760-09-13T00:00:00.001Z', '1e12'),
        ),
        async (since) => {
          const r = await runMain(['export', 'D07', '--since', since, '--window', 'none', '--limit', '1000'], sandboxEnv);
          scan.capture(`export --since ${JSON.stringify(since)} stderr`, r.err);
          assert.ok(r.code === 0 || r.code === 2, `--since ${JSON.stringify(since)} exited ${r.code}: ${r.err}`);
          assert.doesNotMatch(r.err, STACK);
          if (r.code === 2) {
            invalid += 1;
            assert.equal(r.out, '');
            assert.match(r.err, /^lender export: \S/);
            return;
          }
          valid += 1;
          const bound = Date.parse(since);
          assert.ok(Number.isFinite(bound), `accepted --since ${JSON.stringify(since)} that is no instant`);
          for (const line of r.out.split('\n')) {
            if (line === '') continue;
            const row = JSON.parse(line) as { updated_at: string };
            assert.ok(Date.parse(row.updated_at) >= bound, `${row.updated_at} is before --since ${since}`);
          }
        },
      ),
      { numRuns: SOAK ? 400 : 60, seed },
    );
    ctx.diagnostic(`since values: accepted=${valid} refused=${invalid}`);
  });

  it('printed no password or token', (ctx) => {
    assert.deepEqual(scan.leaks(), []);
    ctx.diagnostic(`figures ${JSON.stringify(figures)}`);
  });
});
