// The env file of `lender sandbox --env` names its process by pid, start time and boot: a file
// left by a sandbox that died is not taken for a running one, also when another process now has
// its pid (after a reboot, or a restarted container).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRunningEnv, removeEnvFile, writeEnvFile } from '../../src/cli/sandbox-env.ts';

let dir: string;
let other: ChildProcess;

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks after boot. */
function startOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[22 - 3]);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lender-env-file-'));
  other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
});
after(async () => {
  other.kill();
  await rm(dir, { recursive: true, force: true });
});

test('a file naming a live process with its start time and boot is a running sandbox', async () => {
  const path = join(dir, 'live.env');
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  await writeFile(path, `# lender sandbox pid ${other.pid} start ${startOf(other.pid!)} boot ${boot} at https://127.0.0.1:1\nexport X='1'\n`);
  assert.deepEqual(await readRunningEnv(path), { pid: other.pid, authUrl: 'https://127.0.0.1:1', lines: "export X='1'\n" });
});

test('the same pid with another start time or another boot is another process: the file is stale', async () => {
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  for (const [name, header] of [
    ['start', `pid ${other.pid} start ${startOf(other.pid!) + 1} boot ${boot}`],
    ['boot', `pid ${other.pid} start ${startOf(other.pid!)} boot 00000000-0000-0000-0000-000000000000`],
  ]) {
    const path = join(dir, `${name}.env`);
    await writeFile(path, `# lender sandbox ${header} at https://127.0.0.1:1\nexport X='1'\n`);
    assert.equal(await readRunningEnv(path), undefined, name);
  }
});

test('a file written before start and boot were recorded still counts while its pid lives', async () => {
  const path = join(dir, 'old.env');
  await writeFile(path, `# lender sandbox pid ${other.pid} at https://127.0.0.1:1\nexport X='1'\n`);
  assert.equal((await readRunningEnv(path))?.pid, other.pid);
});

test('this process writes its own identity, never reads its own file as another sandbox, and removes only its own', async () => {
  const path = join(dir, 'own.env');
  await writeEnvFile(path, 'https://127.0.0.1:2', "export Y='2'\n");
  const first = (await readFile(path, 'utf8')).split('\n')[0]!;
  assert.match(first, new RegExp(`^# lender sandbox pid ${process.pid} start ${startOf(process.pid)} boot [\\w-]+ at https://127\\.0\\.0\\.1:2$`));
  assert.equal(await readRunningEnv(path), undefined);
  const others = join(dir, 'others.env');
  await writeFile(others, `# lender sandbox pid ${other.pid} at https://127.0.0.1:1\n`);
  await removeEnvFile(others);
  assert.ok((await readFile(others, 'utf8')).length > 0, 'another process\'s file is left');
  await removeEnvFile(path);
  await assert.rejects(readFile(path, 'utf8'), { code: 'ENOENT' });
});
