// `lender push` and `lender flag` end to end, in-process, against a sandbox over HTTPS: summary on
// stdout, rejects file with line numbers, exit codes, JSON sources, usage errors, help text.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { CommandIo } from '../../src/cli/command.ts';
import { main } from '../../src/cli/main.ts';
import type { LenderClient } from '../../src/client/client.ts';
import type { ExportRow } from '../../src/core/types.ts';
import { connect, type Connection } from '../../src/connect.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { TEST_SANDBOX_DEFAULTS } from '../helpers/sandbox.ts';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

let connection: Connection;
let sandbox: Sandbox;
let client: LenderClient;
let dir: string;

before(async () => {
  connection = await connect({ sandbox: { ...TEST_SANDBOX_DEFAULTS, seed: 11, scale: 20 } });
  sandbox = connection.sandbox!;
  client = connection.client;
  dir = await mkdtemp(join(tmpdir(), 'cli-push-'));
});
after(async () => {
  await connection?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(argv: string[], stdin: string | Buffer | Readable = '', env: NodeJS.ProcessEnv | undefined = undefined, signal = new AbortController().signal): Promise<Run> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d) => (stdout += d));
  err.on('data', (d) => (stderr += d));
  const { email, password } = sandbox.credentials('demo');
  const io: CommandIo = {
    stdout: out,
    stderr: err,
    stdin: stdin instanceof Readable ? stdin : Readable.from([Buffer.from(stdin)]),
    env: env ?? {
      LENDER_AUTH_URL: sandbox.authUrl,
      LENDER_SUBDOMAIN: 'demo',
      LENDER_EMAIL: email,
      LENDER_PASSWORD: password,
      LENDER_CA_FILE: sandbox.caFile,
      LENDER_CREDENTIALS_FILE: join(dir, 'no-such-credentials.json'),
    },
    signal,
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

function record(debtor: string, accountId: string, extra: Record<string, unknown> = {}) {
  return {
    status: 1, debtorCompanyId: debtor, firstName: 'Amal', lastName: 'Haddad', language: 'en', accountId, subAccountId: 'S', principal: '10',
    birthDate: '04/04/1984', dateDue: '01/06/2027', phones: [{ number: '+971500000004' }], loanType: 3, ...extra,
  };
}

async function rows(dataset: 'D02' | 'D03', debtor: string): Promise<ExportRow[]> {
  await sandbox.drain();
  const found: ExportRow[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.fetchPage(dataset, { since: '2026-10-01T00:00:00.000Z', limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    found.push(...page.rows.filter((r) => r.debtor_company_id === debtor));
    cursor = page.pagination.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return found;
}

describe('lender push', () => {
  it('pushes NDJSON, writes rejects with line numbers, prints one summary line and exits 3', async () => {
    const file = join(dir, 'accounts.ndjson');
    const rejects = join(dir, 'rejects.ndjson');
    await writeFile(
      file,
      [
        JSON.stringify(record('CLI-1', 'A1')),
        '{"status": 1, "debtorCompanyId": ',
        '',
        JSON.stringify(record('CLI-1', 'A2', { principal: 'ten' })),
        JSON.stringify(record('CLI-1', 'A3', { emails: [{ email: 'nobody' }] })),
        JSON.stringify(record('CLI-1', 'A4', { principal: 12.5 })),
      ].join('\n'),
    );
    const { code, stdout } = await run(['push', file, '--rejects', rejects, '--batch-size', '2']);
    assert.equal(code, 3);
    const lines = stdout.trimEnd().split('\n');
    assert.equal(lines.length, 1);
    const summary = JSON.parse(lines[0]!);
    assert.deepEqual(
      { ...summary, bytes: 0 },
      { received: 5, accepted: 2, rejected: 3, rejectedByReason: { malformed: 1, invalid: 1, server: 1 }, batches: 2, requests: 3, retries: 0, bytes: 0, rejectsFile: rejects },
    );
    const rejected = (await readFile(rejects, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(
      rejected.map((r) => [r.line, r.reason, r.errors[0]]).sort(),
      [
        [2, 'malformed', rejected.find((r) => r.line === 2).errors[0]],
        [4, 'invalid', 'principal must be a valid number'],
        [5, 'server', 'emails[0].email must be a valid email address'],
      ],
    );
    assert.match(rejected.find((r) => r.line === 2).errors[0], /^line 2 is not valid JSON/);
    const subs = await rows('D03', 'CLI-1');
    assert.deepEqual(subs.map((r) => [r.account_id, r.principal]).sort(), [['A1', '10'], ['A4', '12.5']]);
  });

  it('reads {"accounts": [...]} from stdin without --format and exits 0 when all are accepted', async () => {
    const body = JSON.stringify({ accounts: [record('CLI-2', 'B1'), record('CLI-2', 'B2')] }, null, 2);
    const { code, stdout } = await run(['push', '-'], body);
    assert.equal(code, 0);
    assert.deepEqual({ ...JSON.parse(stdout), bytes: 0 }, { received: 2, accepted: 2, rejected: 0, rejectedByReason: {}, batches: 1, requests: 1, retries: 0, bytes: 0 });
    assert.equal((await rows('D03', 'CLI-2')).length, 2);
  });

  it('sends what precedes a JSON syntax error, reports where it is, and exits 1', async () => {
    const text = `[\n${JSON.stringify(record('CLI-3', 'C1'))},\n${JSON.stringify(record('CLI-3', 'C2'))},\n{"status": 1,, "x": 2},\n${JSON.stringify(record('CLI-3', 'C3'))}\n]`;
    const file = join(dir, 'broken.json');
    await writeFile(file, text);
    const { code, stdout, stderr } = await run(['push', file, '--format', 'json']);
    assert.equal(code, 1);
    const summary = JSON.parse(stdout);
    assert.equal(summary.accepted, 2);
    assert.equal(summary.received, 2);
    assert.deepEqual({ ...summary.sourceError, message: '' }, { message: '', line: 4, column: 14, offset: summary.sourceError.offset, elementsRead: 2 });
    assert.match(summary.sourceError.message, /^JSON syntax error at line 4, column 14/);
    assert.match(stderr, /JSON syntax error at line 4/);
    assert.deepEqual((await rows('D03', 'CLI-3')).map((r) => r.account_id).sort(), ['C1', 'C2']);
  });

  it('--strict enforces the machine-readable schema fields', async () => {
    const { code, stdout } = await run(['push', '--strict'], JSON.stringify(record('CLI-4', 'D1', { birthDate: undefined })));
    assert.equal(code, 3);
    assert.deepEqual(JSON.parse(stdout).rejectedByReason, { invalid: 1 });
  });
});

describe('lender push: a run that cannot finish still accounts for every record', () => {
  it('--rejects naming the input file (as an argument or as stdin) is refused, the input left as it was', async () => {
    const file = join(dir, 'same.ndjson');
    const text = `${JSON.stringify({ status: 9 })}\n${JSON.stringify(record('SAME-1', 'A1'))}\n`;
    await writeFile(file, text, { mode: 0o644 });
    const named = await run(['push', file, '--rejects', join(dir, '.', 'same.ndjson')]);
    assert.equal(named.code, 2, named.stderr);
    assert.match(named.stderr, /--rejects .*same\.ndjson is the input file: writing rejects there would empty it first/);
    assert.equal(named.stdout, '');
    assert.equal(await readFile(file, 'utf8'), text);
    assert.equal((await stat(file)).mode & 0o777, 0o644);
    assert.deepEqual(await rows('D03', 'SAME-1'), [], 'nothing was sent');
  });

  it('stdin redirected from the rejects file, or from a directory, is refused before anything is read', async () => {
    const file = join(dir, 'stdin-same.ndjson');
    const text = `${JSON.stringify({ status: 9 })}\n`;
    await writeFile(file, text);
    const { email, password } = sandbox.credentials('demo');
    const env = {
      PATH: process.env.PATH, LENDER_AUTH_URL: sandbox.authUrl, LENDER_SUBDOMAIN: 'demo', LENDER_EMAIL: email,
      LENDER_PASSWORD: password, LENDER_CA_FILE: sandbox.caFile, LENDER_CREDENTIALS_FILE: join(dir, 'no-such-credentials.json'),
    };
    // A process of its own (stdin is a file descriptor), not waited for synchronously: the
    // sandbox it would log in to runs in this one.
    const cli = async (stdin: string, args: string[]): Promise<{ status: number | null; stderr: string }> => {
      const fd = openSync(stdin, 'r');
      try {
        const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'push', '-', ...args], { env, stdio: [fd, 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr!.on('data', (d: Buffer) => (stderr += d));
        const [status] = (await once(child, 'exit')) as [number | null];
        return { status, stderr };
      } finally {
        closeSync(fd);
      }
    };
    const same = await cli(file, ['--rejects', file]);
    assert.equal(same.status, 2, same.stderr);
    assert.match(same.stderr, /is the input file: writing rejects there would empty it first/);
    assert.equal(await readFile(file, 'utf8'), text);
    const folder = await cli(dir, []);
    assert.equal(folder.status, 1, folder.stderr);
    assert.equal(folder.stderr, 'lender push: stdin is a directory, not a file of records\n');
  });

  it('an input that fails part way: what was read is sent, the summary says where it stopped (exit 1)', async () => {
    async function* failing() {
      yield `${JSON.stringify(record('CUT-1', 'A1'))}\n${JSON.stringify(record('CUT-1', 'A2'))}\n{"status": 9}\n`;
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    }
    const { code, stdout, stderr } = await run(['push', '-'], Readable.from(failing()));
    assert.equal(code, 1, stderr);
    const summary = JSON.parse(stdout) as Record<string, unknown>;
    assert.deepEqual([summary.received, summary.accepted, summary.rejected], [3, 2, 1]);
    assert.deepEqual(summary.sourceError, { message: 'cannot read stdin to the end: read ECONNRESET' });
    assert.match(stderr, /lender push: cannot read stdin to the end: read ECONNRESET\n/);
    assert.deepEqual((await rows('D03', 'CUT-1')).map((r) => r.account_id).sort(), ['A1', 'A2']);
  });

  it('a rejects file that cannot be written: the summary still comes, then the error naming the file (exit 1)', async () => {
    // Many rejects, so the input is still being read when the file fails: that is the writer's
    // failure, not the input's.
    const lines = [JSON.stringify(record('FULL-1', 'A1')), JSON.stringify(record('FULL-1', 'A2'))];
    for (let i = 0; i < 20_000; i += 1) lines.push(JSON.stringify({ status: 9, n: i }));
    const { code, stdout, stderr } = await run(['push', '-', '--rejects', '/dev/full'], lines.join('\n'));
    assert.equal(code, 1, stderr);
    const summary = JSON.parse(stdout) as { received: number; accepted: number; rejected: number; sourceError?: unknown };
    assert.equal(summary.received, summary.accepted + summary.rejected);
    assert.equal(summary.sourceError, undefined, 'the input was readable');
    assert.match(stderr, /lender push: cannot write the rejects file \/dev\/full: no space left on device \(ENOSPC\)\n$/);
  });

  it('stdin a terminal: says it reads records from there, and how to end them', async () => {
    const terminal = Object.assign(Readable.from([Buffer.from(`${JSON.stringify(record('TTY-1', 'A1'))}\n`)]), { isTTY: true });
    const typed = await run(['push'], terminal);
    assert.equal(typed.code, 0, typed.stderr);
    assert.equal(typed.stderr, 'lender push: reading records from the terminal, one JSON object a line; Ctrl-D ends them, Ctrl-C stops.\n');
    assert.equal((JSON.parse(typed.stdout) as { accepted: number }).accepted, 1);
    // Not from a pipe or a file.
    const piped = await run(['push'], `${JSON.stringify(record('TTY-2', 'A1'))}\n`);
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(piped.stderr, '');
  });

  it('a rejects file that cannot be opened (under a file, a folder): the writer fails before it takes a record, nothing sent (exit 1)', async () => {
    const input = [JSON.stringify(record('NOPEN-1', 'A1')), JSON.stringify({ status: 9 })].join('\n');
    const file = join(dir, 'not-a-folder.txt');
    await writeFile(file, 'x');
    for (const [target, said] of [
      [join(file, 'r.ndjson'), `cannot create the folder ${file}: a file of that name is there (EEXIST)`],
      [dir, `cannot write the rejects file ${dir}: illegal operation on a directory (EISDIR)`],
    ]) {
      const { code, stdout, stderr } = await run(['push', '-', '--rejects', target!], input);
      assert.equal(code, 1, stderr);
      // The summary still comes: nothing taken, and no "rejectsFile", which the error names.
      const summary = JSON.parse(stdout) as Record<string, unknown>;
      assert.deepEqual([summary.received, summary.accepted, summary.rejected, summary.batches], [0, 0, 0, 0]);
      assert.equal(summary.rejectsFile, undefined);
      assert.equal(stderr, `lender push: ${said}\n`);
    }
    assert.deepEqual(await rows('D03', 'NOPEN-1'), [], 'nothing was sent');
    // Opened once logged in: a run that cannot log in leaves the last run's rejects as they were.
    const last = join(dir, 'last-rejects.ndjson');
    await writeFile(last, '{"index":0,"reason":"invalid","errors":["kept"]}\n');
    const none = await run(['push', '-', '--rejects', last], input, { LENDER_CREDENTIALS_FILE: join(dir, 'no-such-credentials.json') });
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /^lender push: no credentials: /);
    assert.equal(await readFile(last, 'utf8'), '{"index":0,"reason":"invalid","errors":["kept"]}\n');
  });

  it('Ctrl-C: every record read is accepted or in the rejects file as stopped, and the summary adds up (exit 130)', async () => {
    const rejects = join(dir, 'stopped.ndjson');
    const controller = new AbortController();
    const input = new PassThrough();
    // Records, then an input that stays open, as a terminal or a pipe would.
    for (let i = 1; i <= 30; i += 1) input.write(`${JSON.stringify(record('STOP-1', `A${i}`))}\n`);
    const running = run(['push', '-', '--rejects', rejects], input, undefined, controller.signal);
    await new Promise((r) => setTimeout(r, 300));
    controller.abort();
    const { code, stdout, stderr } = await running;
    assert.equal(code, 130, stderr);
    const summary = JSON.parse(stdout) as { received: number; accepted: number; rejected: number; rejectedByReason: Record<string, number>; stopped: boolean };
    assert.equal(summary.stopped, true);
    assert.equal(summary.received, 30);
    assert.equal(summary.received, summary.accepted + summary.rejected);
    const lines = (await readFile(rejects, 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { reason: string; record: { accountId: string } });
    assert.equal(lines.length, summary.rejected);
    assert.equal(summary.rejectedByReason.stopped, summary.rejected);
    // Each record is in the service (accepted, or in flight at the stop) or in the rejects file.
    const stored = new Set((await rows('D03', 'STOP-1')).map((r) => String(r.account_id)));
    const reported = new Set(lines.map((l) => l.record.accountId));
    for (let i = 1; i <= 30; i += 1) assert.ok(stored.has(`A${i}`) || reported.has(`A${i}`), `A${i} is nowhere`);
    assert.ok(stored.size >= summary.accepted);
  });
});

describe('lender push and flag: Ctrl-C while logging in', () => {
  for (const name of ['push', 'flag'] as const) {
    it(`${name}: the summary still comes, with nothing read and "stopped": true (exit 130)`, async () => {
      const controller = new AbortController();
      const requests = sandbox.stats().requests;
      // The login is held by the sandbox's latency until the stop.
      sandbox.setFaults({ latencyMs: 60_000 });
      try {
        const running = run([name, '-'], '', undefined, controller.signal);
        while (sandbox.stats().requests === requests) await new Promise((r) => setTimeout(r, 10));
        controller.abort();
        const { code, stdout, stderr } = await running;
        assert.equal(code, 130, stderr);
        assert.deepEqual(JSON.parse(stdout), {
          received: 0, accepted: 0, rejected: 0, rejectedByReason: {}, batches: 0, requests: 0, retries: 0, bytes: 0, stopped: true,
        });
      } finally {
        sandbox.setFaults({ latencyMs: 0 });
      }
    });
  }
});

describe('lender push: hostile input', () => {
  it('rejects records nested too deeply, writes a preview line for each, and the summary adds up (exit 3)', async () => {
    const rejects = join(dir, 'deep-rejects.ndjson');
    const deepData = `${JSON.stringify(record('CLI-6', 'F2')).slice(0, -1)},"additionalData":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`;
    const text = [
      JSON.stringify(record('CLI-6', 'F1')),
      deepData,
      `${'['.repeat(200_000)}${']'.repeat(200_000)}`,
      JSON.stringify(record('CLI-6', 'F3')),
    ].join('\n');
    const { code, stdout, stderr } = await run(['push', '-', '--rejects', rejects], text);
    assert.equal(stderr, '');
    assert.equal(code, 3);
    const summary = JSON.parse(stdout);
    assert.deepEqual([summary.received, summary.accepted, summary.rejected, summary.rejectedByReason], [4, 2, 2, { invalid: 1, malformed: 1 }]);
    const lines = (await readFile(rejects, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.line, l.reason, l.errors, typeof l.recordPreview, 'record' in l]), [
      [2, 'invalid', ['record is nested too deeply (more than 64 levels)'], 'string', false],
      [3, 'malformed', ['record is nested too deeply (more than 64 levels)'], 'string', false],
    ]);
    assert.match(lines[0].recordPreview, /^\{"status":1,"debtorCompanyId":"CLI-6".*"accountId":"F2"/);
    assert.deepEqual((await rows('D03', 'CLI-6')).map((r) => r.account_id).sort(), ['F1', 'F3']);
  });

  it('rejects an NDJSON line that is not UTF-8 as malformed, with its line, and sends the rest (exit 3)', async () => {
    const [head, tail] = JSON.stringify(record('CLI-7', 'G2', { firstName: '@@' })).split('@@') as [string, string];
    const input = Buffer.concat([
      Buffer.from(`${JSON.stringify(record('CLI-7', 'G1', { firstName: 'Zoë' }))}\n`),
      Buffer.from(head), Buffer.from([0x41, 0xff, 0xfe, 0xc3, 0x28]), Buffer.from(`${tail}\n`),
      Buffer.from(`${JSON.stringify(record('CLI-7', 'G3'))}\n`),
    ]);
    const rejects = join(dir, 'utf8-rejects.ndjson');
    const { code, stdout } = await run(['push', '-', '--rejects', rejects], input);
    assert.equal(code, 3);
    assert.deepEqual(JSON.parse(stdout).rejectedByReason, { malformed: 1 });
    const [reject] = (await readFile(rejects, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual([reject.line, reject.reason, reject.errors], [2, 'malformed', ['line 2 is not valid UTF-8']]);
    const subs = await rows('D03', 'CLI-7');
    assert.deepEqual(subs.map((r) => r.account_id).sort(), ['G1', 'G3']);
  });

  it('stops a JSON document at a byte that is not UTF-8, says where, and sends what came before (exit 1)', async () => {
    const input = Buffer.concat([
      Buffer.from(`[\n${JSON.stringify(record('CLI-8', 'H1'))},\n{"status": 1, "firstName": "`),
      Buffer.from([0xc0, 0xaf]),
      Buffer.from(`"},\n${JSON.stringify(record('CLI-8', 'H3'))}\n]`),
    ]);
    const { code, stdout, stderr } = await run(['push', '-'], input);
    assert.equal(code, 1);
    const summary = JSON.parse(stdout);
    assert.deepEqual([summary.received, summary.accepted], [1, 1]);
    assert.deepEqual({ ...summary.sourceError, message: '' }, { message: '', line: 3, column: 29, offset: summary.sourceError.offset, elementsRead: 1 });
    assert.match(summary.sourceError.message, /^the JSON document is not valid UTF-8 at line 3, column 29/);
    assert.match(stderr, /^lender push: the JSON document is not valid UTF-8 at line 3/);
    assert.deepEqual((await rows('D03', 'CLI-8')).map((r) => r.account_id), ['H1']);
  });
});

describe('--delivery-timeout and --max-attempts', () => {
  /** stdin that turns the sandbox's faults on when the command first reads it: after login, so
   * only the record requests meet them. */
  function stdinWithFaults(text: string, faults: Record<string, number>): Readable {
    let sent = false;
    return new Readable({
      read() {
        if (sent) return;
        sent = true;
        sandbox.setFaults({ faults });
        this.push(Buffer.from(text));
        this.push(null);
      },
    });
  }

  async function pushUnderFaults(argv: string[], records: object[], command: 'push' | 'flag' = 'push') {
    const before = sandbox.stats().faultsInjected;
    try {
      const result = await run([command, '-', '--batch-size', '2', ...argv], stdinWithFaults(records.map((r) => JSON.stringify(r)).join('\n'), { '500': 1 }));
      return { ...result, summary: JSON.parse(result.stdout), faults: sandbox.stats().faultsInjected - before };
    } finally {
      sandbox.setFaults({ faults: {} });
    }
  }

  it('1: each request is made once, and its records are rejected as failed', async () => {
    const records = ['K1', 'K2', 'K3', 'K4', 'K5'].map((a) => record('CLI-9', a));
    const { code, summary, faults } = await pushUnderFaults(['--max-attempts', '1'], records);
    assert.equal(code, 3);
    assert.deepEqual(
      { ...summary, bytes: 0 },
      { received: 5, accepted: 0, rejected: 5, rejectedByReason: { failed: 5 }, batches: 3, requests: 3, retries: 0, bytes: 0 },
    );
    assert.equal(faults, 3, 'one request per batch reached the service');
  });

  it('without --max-attempts, a batch failing throughout is retried until --delivery-timeout, then rejected with the error', { timeout: 60_000 }, async () => {
    const records = [record('CLI-9', 'L1'), record('CLI-9', 'L2')];
    const { code, summary, faults, stderr } = await pushUnderFaults(['--delivery-timeout', '300ms'], records);
    assert.deepEqual([code, summary.accepted, summary.rejectedByReason, summary.requests], [3, 0, { failed: 2 }, 1]);
    // Every attempt met the fault; each after the first was a retry.
    assert.equal(summary.retries, faults - 1);
    assert.match(stderr, /^lender push: line 1 rejected \(failed\): The service failed on POST \S+\/accounts with status 500: Something went wrong/m);
  });

  it('--max-attempts N stops each request after N attempts, well within the deadline', async () => {
    const records = [record('CLI-9', 'L3'), record('CLI-9', 'L4')];
    const three = await pushUnderFaults(['--max-attempts', '3'], records);
    assert.deepEqual([three.summary.rejectedByReason, three.summary.requests, three.summary.retries, three.faults], [{ failed: 2 }, 1, 2, 3]);
    // Far above the old limit of 20: a count is no longer what bounds the time spent.
    const many = await pushUnderFaults(['--max-attempts', '50', '--delivery-timeout', '200ms'], records);
    assert.deepEqual([many.code, many.summary.rejectedByReason], [3, { failed: 2 }]);
    assert.ok(many.faults < 50, `${many.faults} attempts`);
  });

  it('lender flag takes it too', async () => {
    // The account exists: a fault stands in only for an answer that would have succeeded.
    assert.equal((await run(['push', '-'], JSON.stringify(record('CLI-9', 'M1')))).code, 0);
    const { code, summary, faults } = await pushUnderFaults(['--max-attempts', '1'], [{ status: 5, debtorCompanyId: 'CLI-9', accountId: 'M1' }], 'flag');
    assert.equal(code, 3);
    assert.deepEqual([summary.rejectedByReason, summary.retries, faults], [{ failed: 1 }, 0, 1]);
  });

  it('with the budget raised, a flaky service still accepts every record', async () => {
    // Every other request fails at most: 500 at 0.5 with 20 attempts leaves a request failing
    // throughout with odds of one in a million.
    const records = Array.from({ length: 8 }, (_, i) => record('CLI-10', `M${i}`));
    const before = sandbox.stats().faultsInjected;
    try {
      const { code, stdout } = await run(['push', '-', '--batch-size', '1', '--max-attempts', '20'], stdinWithFaults(records.map((r) => JSON.stringify(r)).join('\n'), { '500': 0.5 }));
      const summary = JSON.parse(stdout);
      assert.equal(code, 0);
      assert.deepEqual([summary.accepted, summary.rejected], [8, 0]);
      assert.equal(summary.retries, sandbox.stats().faultsInjected - before);
    } finally {
      sandbox.setFaults({ faults: {} });
    }
  });
});

describe('lender flag', () => {
  it('sets Do Not Contact from NDJSON, and rejects an unknown account with the service message', async () => {
    const file = join(dir, 'accounts-flag.ndjson');
    await writeFile(file, `${JSON.stringify(record('CLI-5', 'E1'))}\n${JSON.stringify(record('CLI-5', 'E2'))}\n`);
    assert.equal((await run(['push', file])).code, 0);
    await sandbox.drain();
    const rejects = join(dir, 'flag-rejects.ndjson');
    const flags = [
      { status: 'doNotContact', debtorCompanyId: 'CLI-5', accountId: 'E1' },
      { status: 6, debtorCompanyId: 'CLI-5', accountId: 'nope' },
    ];
    const { code, stdout } = await run(['flag', '--rejects', rejects], flags.map((f) => JSON.stringify(f)).join('\n'));
    assert.equal(code, 3);
    assert.deepEqual(JSON.parse(stdout).rejectedByReason, { server: 1 });
    const [reject] = (await readFile(rejects, 'utf8')).trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual([reject.line, reject.errors], [2, ['account nope not found for debtor CLI-5']]);
    const accounts = await rows('D02', 'CLI-5');
    assert.equal(accounts.length, 2);
    for (const row of accounts) assert.equal(row.do_not_contact, true);
  });
});

describe('rejects without --rejects', () => {
  it('are named on stderr, so an exit 3 never comes without its reasons; stdout keeps only the summary', async () => {
    const flags = [
      { status: 6, debtorCompanyId: 'CLI-9', accountId: 'nope' },
      { status: 7, debtorCompanyId: 'CLI-9', accountId: 'nope' },
    ];
    const { code, stdout, stderr } = await run(['flag'], flags.map((f) => JSON.stringify(f)).join('\n'));
    assert.equal(code, 3);
    assert.deepEqual(JSON.parse(stdout).rejectedByReason, { invalid: 1, server: 1 });
    assert.equal(stdout.trimEnd().split('\n').length, 1);
    assert.match(stderr, /^lender flag: line 1 rejected \(server\): account nope not found for debtor CLI-9$/m);
    assert.match(stderr, /^lender flag: line 2 rejected \(invalid\): Invalid status value\. Accepted values: 5, 6 \(or "disputed", "doNotContact"\)$/m);
  });

  it('past the first 20, says how many more there are', async () => {
    const lines = Array.from({ length: 25 }, () => JSON.stringify({ status: 1 })).join('\n');
    const { code, stderr } = await run(['push', '-'], lines);
    assert.equal(code, 3);
    assert.equal(stderr.match(/ rejected \(invalid\): /g)?.length, 20);
    assert.match(stderr, /5 more rejected records not shown; --rejects FILE keeps them all/);
  });
});

describe('usage', () => {
  it('answers bad arguments with exit 2 and a pointer to --help', async () => {
    for (const argv of [
      ['push', '--format', 'xml'],
      ['push', '--batch-size', '0'],
      ['push', '--max-attempts', '0'],
      ['flag', '--max-attempts', 'many'],
      ['push', '--delivery-timeout', '0'],
      ['push', '--delivery-timeout', 'soon'],
      ['flag', '--delivery-timeout', '2 minutes'],
      ['push', '--delivery-timeout', '1.5d'],
      ['push', 'a.ndjson', 'b.ndjson'],
      ['flag', '--strict'],
    ]) {
      const { code, stderr } = await run(argv);
      assert.equal(code, 2, argv.join(' '));
      assert.match(stderr, /--help/);
    }
  });

  it('an input file that cannot be read is a runtime failure (exit 1), found before logging in', async () => {
    for (const [argv, said] of [
      [['push', join(dir, 'missing.ndjson'), '--sandbox'], /^lender push: cannot read .*missing\.ndjson \(ENOENT\)\n$/],
      [['flag', dir, '--sandbox'], /^lender flag: .* is a directory, not a file of records\n$/],
    ] as const) {
      const { code, stdout, stderr } = await run([...argv]);
      assert.equal(code, 1, argv.join(' '));
      assert.equal(stdout, '');
      assert.match(stderr, said);
    }
  });

  it('without credentials names both ways to give them', async () => {
    const { code, stderr } = await run(['push'], '', { LENDER_CREDENTIALS_FILE: join(dir, 'none.json') });
    assert.equal(code, 2);
    assert.match(stderr, /--sandbox/);
    assert.match(stderr, /--auth-url/);
  });

  it('--help lists every option the command takes', async () => {
    for (const name of ['push', 'flag']) {
      const { code, stdout } = await run([name, '--help']);
      assert.equal(code, 0);
      const options = ['--format', '--batch-size', '--concurrency', '--delivery-timeout', '--max-attempts', '--rejects', '--progress', '--sandbox', '--auth-url'];
      for (const option of options) assert.ok(stdout.includes(option), `${name} --help mentions ${option}`);
      assert.equal(stdout.includes('--strict'), name === 'push');
      assert.match(stdout, /Exit codes: 0 .*; 3 .*; 1 .*; 2 .*; 130 interrupted/s);
    }
  });
});
