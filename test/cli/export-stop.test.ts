// `lender export --state FILE >> out` stopped by Ctrl-C says where its progress is, and the same
// command again, appending to the same output, writes the rest: every row of a plain export once.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LENDER_BIN, startSandboxChild, type SandboxChild } from '../helpers/resilience.ts';

describe('lender export --state stopped by Ctrl-C', { timeout: 120_000 }, () => {
  let sandbox: SandboxChild;
  let dir: string;
  before(async () => {
    // 40 ms a request: the export of 3,000 rows in pages of 50 takes seconds, time to stop it.
    sandbox = await startSandboxChild(['--seed', '9', '--scale', '3000', '--latency', '40']);
    dir = await mkdtemp(join(tmpdir(), 'lender-export-stop-'));
  });
  after(async () => {
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** `lender export D07 --limit 50 ...args >> file`; `stopOnceWritten`: SIGINT once the file grew. */
  async function exportInto(file: string, args: string[], stopOnceWritten = false): Promise<{ code: number | null; stderr: string }> {
    const fd = openSync(file, 'a');
    try {
      const child = spawn(process.execPath, [LENDER_BIN, 'export', 'D07', '--limit', '50', ...args], {
        env: sandbox.env(), stdio: ['ignore', fd, 'pipe'],
      });
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = once(child, 'close') as Promise<[number | null]>;
      if (stopOnceWritten) {
        const start = statSync(file).size;
        while (statSync(file).size === start && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 5));
        child.kill('SIGINT');
      }
      const [code] = await exited;
      return { code, stderr };
    } finally {
      closeSync(fd);
    }
  }

  it('says where the progress is; the same command again, appending, writes the rest: every row once', async () => {
    const reference = join(dir, 'plain.ndjson');
    const plain = await exportInto(reference, []);
    assert.equal(plain.code, 0, plain.stderr);
    const expected = (await readFile(reference, 'utf8')).split('\n').filter((l) => l !== '');
    assert.equal(expected.length, 3000);

    const out = join(dir, 'd07.ndjson');
    const state = join(dir, 'd07.state.json');
    const stopped = await exportInto(out, ['--state', state], true);
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.equal(stopped.stderr, `lender export: stopped; ${state} records the pages written to stdout: run the same command again, ` +
      'appending (>>) to the same output, to go on after them.\n');
    const before = (await readFile(out, 'utf8')).split('\n').filter((l) => l !== '').length;
    assert.ok(before > 0 && before < expected.length, `stopped part way: ${before} rows`);

    const rest = await exportInto(out, ['--state', state]);
    assert.equal(rest.code, 0, rest.stderr);
    const got = (await readFile(out, 'utf8')).split('\n').filter((l) => l !== '');
    assert.deepEqual(got, expected, 'the rows of a plain export, in its order, each once');
  });
});
