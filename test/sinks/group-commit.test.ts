// commitInGroups: pages read while a commit runs go into the next commit together, in order, each
// page once; a failed commit stops the reading; a failed read waits for the commit in flight.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commitInGroups, rowsOf } from '../../src/sinks/group-commit.ts';

interface Page {
  n: number;
  rows: { n: number }[];
}

const page = (n: number, size = 10): Page => ({ n, rows: Array.from({ length: size }, () => ({ n })) });
const tick = () => new Promise((resolve) => setImmediate(resolve));

async function* pagesOf(count: number, opts: { size?: number; failAt?: number; delay?: () => Promise<unknown> } = {}): AsyncGenerator<Page> {
  for (let n = 0; n < count; n++) {
    await (opts.delay?.() ?? tick());
    if (n === opts.failAt) throw new Error('read failed');
    yield page(n, opts.size);
  }
}

describe('commitInGroups', () => {
  it('a sink faster than the export commits page by page', async () => {
    const groups: number[][] = [];
    await commitInGroups(pagesOf(6, { delay: () => new Promise((r) => setTimeout(r, 5)) }), (p) => p.rows.length, async (g) => {
      groups.push(g.map((p) => p.n));
    });
    assert.deepEqual(groups, [[0], [1], [2], [3], [4], [5]]);
  });

  it('a slower sink gets the pages that arrived meanwhile together, in order, each once', async () => {
    const groups: number[][] = [];
    await commitInGroups(pagesOf(40), (p) => p.rows.length, async (g) => {
      groups.push(g.map((p) => p.n));
      for (let i = 0; i < 5; i++) await tick();
    });
    assert.deepEqual(groups.flat(), Array.from({ length: 40 }, (_, i) => i));
    assert.ok(groups.length < 40 && groups.some((g) => g.length > 1), `grouped: ${JSON.stringify(groups)}`);
  });

  it('holds back the export once maxRows are waiting', async () => {
    let waiting = 0;
    let most = 0;
    let release: (() => void) | undefined;
    const pages = (async function* () {
      for (let n = 0; n < 30; n++) {
        waiting += 10;
        most = Math.max(most, waiting);
        yield page(n);
      }
    })();
    const done = commitInGroups(pages, (p) => p.rows.length, async (g) => {
      await new Promise<void>((r) => (release = r));
      waiting -= g.length * 10;
    }, 50);
    let ended = false;
    void done.then(() => (ended = true), () => (ended = true));
    for (let i = 0; i < 10_000 && !ended; i++) {
      await tick();
      const r = release;
      release = undefined;
      r?.();
    }
    await done;
    // A page in the commit, up to maxRows waiting, and the one whose push reached the limit.
    assert.ok(most >= 50 && most <= 10 + 50 + 10, `at most ${most} rows were held`);
  });

  it('a failed commit stops the reading and rejects with its error; nothing after it is committed', async () => {
    const committed: number[] = [];
    let read = 0;
    const pages = (async function* () {
      for (let n = 0; n < 100; n++) {
        read += 1;
        await tick();
        yield page(n);
      }
    })();
    await assert.rejects(commitInGroups(pages, (p) => p.rows.length, async (g) => {
      if (g.some((p) => p.n >= 3)) throw new Error('disk full');
      committed.push(...g.map((p) => p.n));
    }), /disk full/);
    assert.deepEqual(committed, [0, 1, 2]);
    assert.ok(read < 100, 'the reading stopped');
  });

  it('a failed read waits for the commit in flight, then rejects with the read error', async () => {
    let inFlight = false;
    let finished = 0;
    await assert.rejects(commitInGroups(pagesOf(10, { failAt: 4 }), (p) => p.rows.length, async () => {
      inFlight = true;
      for (let i = 0; i < 20; i++) await tick();
      inFlight = false;
      finished += 1;
    }), /read failed/);
    assert.equal(inFlight, false, 'returned while a commit was running');
    assert.ok(finished >= 1);
  });

  it('rowsOf keeps a lone page\'s rows and joins a group\'s in order', () => {
    const one = page(1, 3);
    assert.equal(rowsOf([one]), one.rows);
    assert.deepEqual(rowsOf([page(1, 2), page(2, 1)]).map((r) => (r as { n: number }).n), [1, 1, 2]);
  });
});
