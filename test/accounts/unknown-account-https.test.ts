// A 400 naming an account that is not in the request, over real HTTPS. The sandbox validates like
// the service and so never answers that; a scripted HTTPS server does, through the real client and
// the real `lender push`. The records the 400 did not name are sent again and accepted, and the
// account it named is reported (an 'anomaly' event, a warning line on stderr).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAccountWriter } from '../../src/accounts/account-writer.ts';
import type { AnomalyEvent } from '../../src/accounts/anomaly.ts';
import type { RejectEvent } from '../../src/accounts/writer.ts';
import type { CommandIo } from '../../src/cli/command.ts';
import { main } from '../../src/cli/main.ts';
import { LenderClient } from '../../src/client/client.ts';
import { account } from './fake-service.ts';
import { refusal, startScriptedAccountsServer, type ScriptedAccountsServer } from './scripted-accounts-server.ts';

let server: ScriptedAccountsServer;
let client: LenderClient;
let dir: string;

before(async () => {
  server = await startScriptedAccountsServer();
  client = await LenderClient.login(server.credentials());
  dir = await mkdtemp(join(tmpdir(), 'unknown-account-'));
});
after(async () => {
  await client?.close();
  await server?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  server.script.length = 0;
  server.received.length = 0;
});

const GHOST = refusal([{ accountId: 'GHOST-9', errors: ['emails[0].email must be a valid email address'] }]);

describe('a 400 naming an account not in the request, over HTTPS', () => {
  it('the writer resends the records it did not name, they are accepted, and the account is reported', async () => {
    server.script.push(GHOST);
    const writer = createAccountWriter(client, { batchSize: 10 });
    const anomalies: AnomalyEvent[] = [];
    const rejects: RejectEvent[] = [];
    writer.on('anomaly', (a: AnomalyEvent) => anomalies.push(a));
    writer.on('reject', (r: RejectEvent) => rejects.push(r));
    const records = [account(), account(), account()];
    await pipeline(Readable.from(records, { objectMode: true }), writer);
    assert.deepEqual(rejects, []);
    assert.deepEqual(writer.summary, { ...writer.summary, received: 3, accepted: 3, rejected: 0, requests: 2 });
    assert.deepEqual(anomalies, [{
      kind: 'unknown-account', batch: 1, accountId: 'GHOST-9', errors: ['emails[0].email must be a valid email address'], records: 3, action: 'resent',
    }]);
    const ids = records.map((r) => r.accountId);
    assert.deepEqual(server.received.map((body) => body.map((r) => r.accountId)), [ids, ids]);
  });

  it('given the same answer again, the records are rejected with it (reason server), not sent a third time', async () => {
    server.script.push(GHOST, GHOST);
    const writer = createAccountWriter(client, { batchSize: 10 });
    const anomalies: AnomalyEvent[] = [];
    const rejects: RejectEvent[] = [];
    writer.on('anomaly', (a: AnomalyEvent) => anomalies.push(a));
    writer.on('reject', (r: RejectEvent) => rejects.push(r));
    await pipeline(Readable.from([account(), account()], { objectMode: true }), writer);
    assert.equal(server.received.length, 2);
    assert.deepEqual(anomalies.map((a) => a.action), ['resent', 'rejected']);
    assert.deepEqual(rejects.map((r) => [r.reason, r.errors]), [
      ['server', ['account "GHOST-9" (not in this request): emails[0].email must be a valid email address']],
      ['server', ['account "GHOST-9" (not in this request): emails[0].email must be a valid email address']],
    ]);
  });

  it('lender push warns on stderr naming the account, sends the records again and exits 0', async () => {
    server.script.push(GHOST);
    const caFile = join(dir, 'ca.pem');
    await writeFile(caFile, server.ca);
    let stdout = '';
    let stderr = '';
    const out = new PassThrough().on('data', (d) => (stdout += d));
    const err = new PassThrough().on('data', (d) => (stderr += d));
    const records = [account(), account()];
    const io: CommandIo = {
      stdout: out,
      stderr: err,
      stdin: Readable.from([Buffer.from(records.map((r) => JSON.stringify(r)).join('\n'))]),
      env: {
        LENDER_AUTH_URL: server.authUrl, LENDER_SUBDOMAIN: server.lender, LENDER_EMAIL: server.email, LENDER_PASSWORD: server.password,
        LENDER_CA_FILE: caFile, LENDER_CREDENTIALS_FILE: join(dir, 'no-such-credentials.json'),
      },
      signal: new AbortController().signal,
    };
    const code = await main(['push', '-'], io);
    assert.equal(code, 0, stderr);
    const summary = JSON.parse(stdout);
    assert.deepEqual([summary.received, summary.accepted, summary.rejected, summary.requests], [2, 2, 0, 2]);
    assert.match(stderr, /^lender push: warning: the service refused a request of batch 1 \(2 records\) naming account "GHOST-9", which was not in it \(emails\[0\]\.email must be a valid email address\); the records it did not name were sent again$/m);
    assert.equal(server.received.length, 2);
  });
});
