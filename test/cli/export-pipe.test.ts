// `lender export` into a pipe: a reader that goes away after the first line (`| head -1`) ends
// the export quietly with exit 0, unless a state is kept (--state), which may then be ahead of
// what the reader read: exit 1, saying so.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { spawnLender, startSandboxChild, type SandboxChild } from '../helpers/resilience.ts';

describe('lender export into a pipe', { timeout: 120_000 }, () => {
  let sandbox: SandboxChild;
  before(async () => {
    sandbox = await startSandboxChild(['--seed', '5', '--scale', '3000']);
  });
  after(async () => {
    await sandbox.stop();
  });

  it('a reader that closes the pipe after the first line ends the export quietly, exit 0', async () => {
    const child = spawnLender(['export', 'D07', '--limit', '50'], { env: sandbox.env() });
    child.stdin!.end();
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
    let first = '';
    for await (const chunk of child.stdout!) {
      first += String(chunk);
      if (first.includes('\n')) break;
    }
    // Leaving the loop destroys the read end: the export's next write meets a closed pipe.
    child.stdout!.destroy();
    assert.equal(typeof JSON.parse(first.split('\n', 1)[0]!).public_id, 'string');
    const [code, signal] = await exited;
    assert.equal(signal, null);
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /EPIPE|Error|error/);
  });

  it('with --state, the same early close is a failure saying the state may be ahead of what was read (exit 1)', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'lender-export-pipe-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const statePath = join(dir, 'd07.state.json');
    const child = spawnLender(['export', 'D07', '--limit', '50', '--state', statePath], { env: sandbox.env() });
    child.stdin!.end();
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
    let first = '';
    for await (const chunk of child.stdout!) {
      first += String(chunk);
      if (first.includes('\n')) break;
    }
    child.stdout!.destroy();
    const [code] = await exited;
    assert.equal(code, 1, stderr);
    assert.equal(stderr, `lender export: the reader closed stdout before the export ended; ${statePath} records pages written to the pipe ` +
      'that it may not have read. Write to a file (or use lender sync) when the state must match what was kept.\n');
    assert.ok(existsSync(statePath), 'pages of 50 rows fit in the pipe: the first ones were taken, and their state saved');
  });

  it('with --state, a close before any state was saved (a first page larger than the pipe holds) is quiet: exit 0, no state', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'lender-export-pipe-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const statePath = join(dir, 'd07.state.json');
    // 1,000 rows (about 300 kB) wait for the reader, who takes one line and goes.
    const child = spawnLender(['export', 'D07', '--limit', '1000', '--state', statePath], { env: sandbox.env() });
    child.stdin!.end();
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
    let first = '';
    for await (const chunk of child.stdout!) {
      first += String(chunk);
      if (first.includes('\n')) break;
    }
    child.stdout!.destroy();
    const [code] = await exited;
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '');
    assert.equal(existsSync(statePath), false, 'nothing was saved: the next run starts from the beginning');
  });
});
