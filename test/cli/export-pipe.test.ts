// `lender export` into a pipe: a reader that goes away after the first line (`| head -1`) ends
// the export quietly with exit 0, unless a state is kept (--state), which may then be ahead of
// what the reader read: exit 1, saying so.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { spawnLender, startSandboxChild, type SandboxChild } from '../helpers/resilience.ts';

describe('lender export into a pipe', { timeout: 120_000 }, () => {
  let sandbox: SandboxChild;
  before(async () => {
    sandbox = await startSandboxChild(['--seed', '5', '--scale', '3000']);
  });
  after(async () => {
    await sandbox.stop();
  });

  /** `lender export ...args` whose reader takes the first line (none: `lines` 0) and closes the pipe. */
  async function readOneLine(args: string[], lines = 1): Promise<{ first: string; code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
    const child = spawnLender(['export', ...args], { env: sandbox.env() });
    child.stdin!.end();
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
    let first = '';
    if (lines > 0) {
      for await (const chunk of child.stdout!) {
        first += String(chunk);
        if (first.includes('\n')) break;
      }
    }
    // Leaving the loop destroys the read end: the export's next write meets a closed pipe.
    child.stdout!.destroy();
    const [code, signal] = await exited;
    return { first: first.split('\n', 1)[0]!, code, signal, stderr };
  }

  async function statePathIn(t: TestContext): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'lender-export-pipe-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    return join(dir, 'd07.state.json');
  }

  it('a reader that closes the pipe after the first line ends the export quietly, exit 0', async () => {
    const { first, code, signal, stderr } = await readOneLine(['D07', '--limit', '50']);
    assert.equal(typeof JSON.parse(first).public_id, 'string');
    assert.equal(signal, null);
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /EPIPE|Error|error/);
  });

  it('with --state, the same early close is a failure saying the state may be ahead of what was read (exit 1)', async (t) => {
    const statePath = await statePathIn(t);
    const { code, stderr } = await readOneLine(['D07', '--limit', '50', '--state', statePath]);
    assert.equal(code, 1, stderr);
    assert.equal(stderr, `lender export: the reader closed stdout before the export ended; ${statePath} records pages written to the pipe ` +
      'that it may not have read. Write to a file (or use lender sync) when the state must match what was kept.\n');
    // A page of 50 rows (about 15 kB) fits in the pipe: the first was taken, and the export went
    // on to the next, saving the first's state, before a write met the closed pipe.
    assert.ok(existsSync(statePath));
  });

  it('with --state, a close before any state was saved is quiet: exit 0, no state', async (t) => {
    const statePath = await statePathIn(t);
    // The reader goes before the first write: it meets a closed pipe, and no page was taken.
    const { code, stderr } = await readOneLine(['D07', '--limit', '50', '--state', statePath], 0);
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '');
    assert.equal(existsSync(statePath), false, 'nothing was saved: the next run starts from the beginning');
  });
});
