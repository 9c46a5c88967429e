// The NDJSON sink's exactly-once step, driven directly: a commit records the file's length in the
// state; open() cuts a file back to it (the lines of a page whose state was never saved), refuses
// a file shorter than its state or one its state has no record of, and keeps whole lines for a
// state written before lengths were kept.
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { StateLockedError } from '../../src/exports/state-lock.ts';
import { fileState, memoryState, type DatasetState, type StateStore } from '../../src/exports/state.ts';
import { SinkError } from '../../src/sinks/errors.ts';
import { ndjsonSink } from '../../src/sinks/ndjson-sink.ts';
import type { SinkDataset } from '../../src/sinks/sink.ts';

const D07: SinkDataset = { code: 'D07', section: 'S2', key: 'D07', cursorField: 'updated_at', identity: 'key' };

function stateAt(n: number): DatasetState {
  return { version: 1, dataset: 'D07', highWater: { value: `2026-01-0${n}T00:00:00.000Z`, ids: [`p${n}`] }, load: null };
}
const row = (n: number) => ({ public_id: `p${n}`, updated_at: `2026-01-0${n}T00:00:00.000Z` });

describe('ndjsonSink', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lender-ndjson-sink-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it('records the file length with each state and cuts the file back to it on open', async () => {
    const out = join(dir, 'cut');
    const store = memoryState();
    const sink = ndjsonSink({ dir: out, state: store });
    assert.equal(await sink.open(D07), undefined);
    await sink.commit({ dataset: D07, rows: [row(1), row(2)], state: stateAt(2) });
    const file = join(out, 'D07.ndjson');
    const committed = statSync(file).size;
    assert.equal((await store.load('D07'))?.fileBytes, committed);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    await sink.close();

    // A crash after the next page's lines were appended and before its state was saved.
    appendFileSync(file, JSON.stringify(row(3)) + '\n' + '{"public_id":"p4","upd');
    const again = ndjsonSink({ dir: out, state: store });
    assert.equal((await again.open(D07))?.highWater?.value, stateAt(2).highWater!.value);
    assert.equal(statSync(file).size, committed);
    await again.commit({ dataset: D07, rows: [row(3)], state: stateAt(3) });
    await again.close();
    assert.deepEqual(readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l)), [row(1), row(2), row(3)]);
  });

  it('a crashed first page (lines written, no state saved) is cut at the next open', async () => {
    const out = join(dir, 'fresh');
    const file = join(out, 'D07.ndjson');
    const store = memoryState();
    // The crash: the first page's lines are on disk, and its state never reaches the store.
    const crashing: StateStore = { load: (key) => store.load(key), save: async () => { throw new Error('killed before the state was saved'); } };
    const sink = ndjsonSink({ dir: out, state: crashing });
    await sink.open(D07);
    await assert.rejects(sink.commit({ dataset: D07, rows: [row(1)], state: stateAt(1) }), /killed/);
    await sink.close();
    assert.ok(statSync(file).size > 0);
    assert.ok(existsSync(`${file}.first-page`), 'the first page is marked while its state is unsaved');

    const again = ndjsonSink({ dir: out, state: store });
    assert.equal(await again.open(D07), undefined);
    assert.equal(statSync(file).size, 0);
    await again.commit({ dataset: D07, rows: [row(1), row(2)], state: stateAt(2) });
    await again.close();
    assert.deepEqual(readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l)), [row(1), row(2)]);
    assert.equal(existsSync(`${file}.first-page`), false, 'the marker goes once the state is saved');
  });

  it('a file the state has no record of is refused and left as it is (another state wrote it, or the user)', async () => {
    const out = join(dir, 'foreign');
    const sink = ndjsonSink({ dir: out, state: memoryState() });
    await sink.open(D07);
    await sink.commit({ dataset: D07, rows: [row(1)], state: stateAt(1) });
    await sink.close();
    const file = join(out, 'D07.ndjson');
    const before = readFileSync(file, 'utf8');
    const other = ndjsonSink({ dir: out, state: memoryState() });
    await assert.rejects(other.open(D07), (e: unknown) => e instanceof SinkError && e.message.includes(file) && /no record of/.test(e.message));
    await other.close();
    // So is it under an empty state file (as mktemp makes one), which is no state.
    const emptied = join(dir, 'emptied-state.json');
    writeFileSync(emptied, '');
    const underEmpty = ndjsonSink({ dir: out, state: fileState(emptied) });
    await assert.rejects(underEmpty.open(D07), (e: unknown) => e instanceof SinkError && /no record of/.test(e.message));
    await underEmpty.close();
    assert.equal(readFileSync(file, 'utf8'), before);
    // An empty file holds nothing to lose: it is written to.
    writeFileSync(join(out, 'D08.ndjson'), '');
    const D08: SinkDataset = { ...D07, code: 'D08', key: 'D08' };
    const empty = ndjsonSink({ dir: out, state: memoryState() });
    await empty.open(D08);
    await empty.commit({ dataset: D08, rows: [row(1)], state: stateAt(1) });
    await empty.close();
    assert.deepEqual(JSON.parse(readFileSync(join(out, 'D08.ndjson'), 'utf8')), row(1));
  });

  it('a marker left by a crash just after the first state was saved is stale: only its own state may cut the file, and it keeps it', async () => {
    const out = join(dir, 'stale-marker');
    const file = join(out, 'D07.ndjson');
    const own = fileState(join(out, 'own.json'));
    const sink = ndjsonSink({ dir: out, state: own });
    await sink.open(D07);
    await sink.commit({ dataset: D07, rows: [row(1)], state: stateAt(1) });
    await sink.close();
    // The crash: the state is saved, the marker not yet removed (it names the state it was written under).
    writeFileSync(`${file}.first-page`, resolve(own.path));
    const before = readFileSync(file, 'utf8');

    const other = ndjsonSink({ dir: out, state: fileState(join(out, 'other.json')) });
    await assert.rejects(other.open(D07), (e: unknown) => e instanceof SinkError && /no record of/.test(e.message));
    await other.close();
    assert.equal(readFileSync(file, 'utf8'), before, 'another state does not take the marker for its own');

    const again = ndjsonSink({ dir: out, state: fileState(join(out, 'own.json')) });
    assert.equal((await again.open(D07))?.fileBytes, Buffer.byteLength(before));
    await again.close();
    assert.equal(readFileSync(file, 'utf8'), before);
    assert.equal(existsSync(`${file}.first-page`), false, 'its own state removes the stale marker');
  });

  /** Rows 1 and 2 synced into `out` under a memory state: the store and the file. */
  async function twoRowsIn(out: string): Promise<{ store: StateStore; file: string }> {
    const store = memoryState();
    const sink = ndjsonSink({ dir: out, state: store });
    await sink.open(D07);
    await sink.commit({ dataset: D07, rows: [row(1), row(2)], state: stateAt(2) });
    await sink.close();
    return { store, file: join(out, 'D07.ndjson') };
  }

  it('refuses a file shorter than its state says, naming it, and leaves it as it is', async () => {
    const out = join(dir, 'short');
    const { store, file } = await twoRowsIn(out);
    writeFileSync(file, JSON.stringify(row(1)) + '\n');
    const again = ndjsonSink({ dir: out, state: store });
    await assert.rejects(again.open(D07), (e: unknown) => e instanceof SinkError && e.message.includes(file) && /changed outside/.test(e.message));
    assert.equal(readFileSync(file, 'utf8'), JSON.stringify(row(1)) + '\n');
  });

  it('refuses a recorded length that does not end a line (a state edited by hand), leaving the file as it is', async () => {
    const out = join(dir, 'mid-line');
    const { store, file } = await twoRowsIn(out);
    const before = readFileSync(file, 'utf8');
    const saved = (await store.load('D07'))!;
    await store.save('D07', { ...saved, fileBytes: saved.fileBytes! - 5 });
    const again = ndjsonSink({ dir: out, state: store });
    await assert.rejects(again.open(D07), (e: unknown) => e instanceof SinkError && e.message.includes(file) && /do not end a line/.test(e.message));
    assert.equal(readFileSync(file, 'utf8'), before);
    // The length of a whole line is taken: the second line is cut, the first kept.
    await store.save('D07', { ...saved, fileBytes: Buffer.byteLength(JSON.stringify(row(1)) + '\n') });
    const third = ndjsonSink({ dir: out, state: store });
    await third.open(D07);
    await third.close();
    assert.equal(readFileSync(file, 'utf8'), JSON.stringify(row(1)) + '\n');
  });

  it('a state without a recorded length (an older version wrote it) keeps whole lines only', async () => {
    const out = join(dir, 'legacy');
    const sink = ndjsonSink({ dir: out, state: memoryState({ D07: stateAt(1) }) });
    const file = join(out, 'D07.ndjson');
    await sink.open(D07);
    writeFileSync(file, JSON.stringify(row(1)) + '\n{"public_id":"p2"');
    await sink.close();
    const again = ndjsonSink({ dir: out, state: memoryState({ D07: stateAt(1) }) });
    await again.open(D07);
    await again.commit({ dataset: D07, rows: [row(2)], state: stateAt(2) });
    await again.close();
    assert.deepEqual(readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l)), [row(1), row(2)]);
  });

  it('a file is locked while a run writes it: a run under another state is refused, and its lines left alone', async () => {
    const out = join(dir, 'locked');
    const file = join(out, 'D07.ndjson');
    const store = memoryState();
    const first = ndjsonSink({ dir: out, state: store });
    await first.open(D07);
    await first.commit({ dataset: D07, rows: [row(1)], state: stateAt(1) });
    const written = readFileSync(file, 'utf8');

    const second = ndjsonSink({ dir: out, state: fileState(join(dir, 'locked-other.json')) });
    await assert.rejects(second.open(D07), (error: Error) => {
      assert.ok(error instanceof StateLockedError, String(error));
      assert.equal(error.lockPath, `${file}.lock`);
      assert.equal(error.holder?.pid, process.pid);
      assert.match(error.message, new RegExp(`^the file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another run \\(pid ${process.pid} `));
      return true;
    });
    await second.close();
    assert.equal(readFileSync(file, 'utf8'), written, 'the refused run changed nothing');
    await first.commit({ dataset: D07, rows: [row(2)], state: stateAt(2) });
    await first.close();
    assert.equal(existsSync(`${file}.lock`), false, 'the lock goes with the run');

    // Its run over, the file is still not the other state's to write.
    await assert.rejects(second.open(D07), /has no record of/);
    assert.equal(existsSync(`${file}.lock`), false, 'a refused open leaves no lock');
    const resumed = ndjsonSink({ dir: out, state: store });
    assert.equal((await resumed.open(D07))?.fileBytes, statSync(file).size, 'the state that wrote it goes on');
    await resumed.close();
  });

  it('a commit without open() is refused', async () => {
    const sink = ndjsonSink({ dir: join(dir, 'unopened'), state: memoryState() });
    await assert.rejects(sink.commit({ dataset: D07, rows: [row(1)], state: stateAt(1) }), SinkError);
  });
});
