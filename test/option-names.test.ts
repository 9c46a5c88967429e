// An option the function does not take (from JavaScript: the REPL, notebooks, a script) is refused
// where it is given, naming it and the option likely meant, before anything is read or sent: a
// misspelt name would otherwise leave its default in force, in silence.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ConfigError, createAccountWriter, createFlagWriter, duckdbSink, exportPages, exportRows, LenderClient, ndjsonSink, postgresSink, sync,
} from '../src/index.ts';
import { startSandbox, type Sandbox } from '../src/sandbox/index.ts';
import { SandboxOptionsError } from '../src/sandbox/options.ts';
import { TEST_SANDBOX_DEFAULTS } from './helpers/sandbox.ts';

describe('an option a function does not take', () => {
  let sandbox: Sandbox;
  let client: LenderClient;
  let dir: string;
  before(async () => {
    sandbox = await startSandbox({ ...TEST_SANDBOX_DEFAULTS, scale: 20 });
    client = await LenderClient.login(sandbox.credentials('demo'));
    dir = await mkdtemp(join(tmpdir(), 'lender-option-names-'));
  });
  after(async () => {
    await client.close();
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });

  const refused = (message: string) => (error: unknown): boolean => {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.message, message);
    return true;
  };

  it('exportRows, exportPages: a ConfigError when the stream is made, no request sent', () => {
    const requests = client.stats.requests;
    for (const open of [exportRows, exportPages]) {
      assert.throws(() => open(client, 'D07', { limt: 5 } as never), refused("an export has no option 'limt'; did you mean 'limit'?"));
      assert.throws(() => open(client, 'D07', { includetotal: true } as never), refused("an export has no option 'includetotal'; did you mean 'includeTotal'?"));
    }
    // A known option left undefined is no mistake.
    assert.doesNotThrow(() => exportRows(client, 'D07', { limit: undefined }).destroy());
    assert.equal(client.stats.requests, requests);
  });

  it('sync(): refused before anything is read or written, an option only exports take included', async () => {
    const out = join(dir, 'sync');
    await assert.rejects(sync(client, ['D26'], { out, concurrenc: 3 } as never), refused("sync() has no option 'concurrenc'; did you mean 'concurrency'?"));
    // sync() sets the bounds itself: `since` is not one of its options, which the message lists.
    await assert.rejects(sync(client, ['D26'], { out, since: '2026-01-01T00:00:00Z' } as never), (error: unknown) =>
      error instanceof ConfigError && /^sync\(\) has no option 'since' \(its options: .*\bwindow\b.*\bto, out, state\b/.test(error.message));
    assert.equal(existsSync(out), false);
  });

  it('the sinks: refused when made, before anything is opened', async () => {
    assert.throws(() => ndjsonSink({ dir: join(dir, 'nd'), stat: 'x' } as never), refused("ndjsonSink() has no option 'stat'; did you mean 'state'?"));
    assert.throws(() => duckdbSink({ path: join(dir, 'x.duckdb'), reopenAfter: 5 } as never), refused("duckdbSink() has no option 'reopenAfter'; did you mean 'reopenAfterRows'?"));
    assert.throws(() => postgresSink({ connectionstring: 'postgres://u@127.0.0.1:1/db' } as never),
      refused("postgresSink() has no option 'connectionstring'; did you mean 'connectionString'?"));
    assert.deepEqual(await readdir(dir), []);
  });

  it('the writers: refused by their constructor; the flag writer takes no strict', () => {
    const requests = client.stats.requests;
    assert.throws(() => createAccountWriter(client, { batchsize: 10 } as never), refused("the account writer has no option 'batchsize'; did you mean 'batchSize'?"));
    assert.throws(() => createFlagWriter(client, { strict: true } as never), (error: unknown) =>
      error instanceof ConfigError && /^the flag writer has no option 'strict' \(its options: batchSize, /.test(error.message));
    assert.equal(client.stats.requests, requests);
  });

  it('startSandbox: a SandboxOptionsError, nothing started', async () => {
    await assert.rejects(startSandbox({ scael: 10 } as never), (error: unknown) =>
      error instanceof SandboxOptionsError && error.message === "the sandbox has no option 'scael'; did you mean 'scale'?");
  });
});
