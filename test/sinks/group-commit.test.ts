// commitInGroups: pages are committed once a few thousand rows wait or the first of them has waited
// lingerMs; pages read while a commit runs go into the next commit together, in order, each page
// once; a failed commit stops the reading; a failed read waits for the commit in flight and commits
// the pages read before it. Tests that are not about the linger set it to a minute, so that a busy
// machine cannot change the groups they expect.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commitInGroups, rowsOf } from '../../src/sinks/group-commit.ts';

interface Page {
  n: number;
  rows: { n: number }[];
}

const page = (n: number, size = 10): Page => ({ n, rows: Array.from({ length: size }, () => ({ n })) });
const MINUTE = 60_000;
const tick = () => new Promise((resolve) => setImmediate(resolve));

async function* pagesOf(count: number, opts: { size?: number; failAt?: number; delay?: () => Promise<unknown> } = {}): AsyncGenerator<Page> {
  for (let n = 0; n < count; n++) {
    await (opts.delay?.() ?? tick());
    if (n === opts.failAt) throw new Error('read failed');
    yield page(n, opts.size);
  }
}

describe('commitInGroups', () => {
  it('commits once minRows are waiting, and the rest at the end', async () => {
    const groups: number[][] = [];
    await commitInGroups(pagesOf(7, { delay: () => new Promise((r) => setTimeout(r, 5)) }), (p) => p.rows.length, async (g) => {
      groups.push(g.map((p) => p.n));
    }, { minRows: 30, lingerMs: MINUTE });
    assert.deepEqual(groups, [[0, 1, 2], [3, 4, 5], [6]]);
  });

  it('by default, pages of 1,000 rows are committed three at a time', async () => {
    const groups: number[][] = [];
    await commitInGroups(pagesOf(7, { size: 1000 }), (p) => p.rows.length, async (g) => {
      groups.push(g.map((p) => p.n));
    }, { lingerMs: MINUTE });
    assert.deepEqual(groups, [[0, 1, 2], [3, 4, 5], [6]]);
  });

  it('pages that wait lingerMs are committed together, with fewer than minRows', { timeout: 30_000 }, async () => {
    const groups: number[][] = [];
    let committed = (): void => {};
    // Pages come in bursts, each burst within one turn of the event loop (no timer can fire inside
    // it), and the next burst only after the last one was committed: by its linger, as the stream
    // has not ended.
    const pages = (async function* () {
      for (const burst of [[0, 1, 2], [3], [4, 5]]) {
        const done = new Promise<void>((resolve) => (committed = resolve));
        for (const n of burst) yield page(n);
        await done;
      }
    })();
    const started = performance.now();
    await commitInGroups(pages, (p) => p.rows.length, async (g) => {
      groups.push(g.map((p) => p.n));
      committed();
    }, { minRows: 1_000, lingerMs: 20 });
    assert.deepEqual(groups, [[0, 1, 2], [3], [4, 5]]);
    assert.ok(performance.now() - started >= 3 * 20 - 5, 'each burst waited for its linger');
  });

  it('with minRows of one page, a sink faster than the export commits page by page', async () => {
    const groups: number[][] = [];
    await commitInGroups(pagesOf(6, { delay: () => new Promise((r) => setTimeout(r, 5)) }), (p) => p.rows.length, async (g) => {
      groups.push(g.map((p) => p.n));
    }, { minRows: 10 });
    assert.deepEqual(groups, [[0], [1], [2], [3], [4], [5]]);
  });

  it('a slower sink gets the pages that arrived meanwhile together, in order, each once', async () => {
    const groups: number[][] = [];
    await commitInGroups(pagesOf(40), (p) => p.rows.length, async (g) => {
      groups.push(g.map((p) => p.n));
      for (let i = 0; i < 5; i++) await tick();
    }, { minRows: 10 });
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
    }, { minRows: 10, maxRows: 50 });
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
    }, { minRows: 10 }), /disk full/);
    assert.deepEqual(committed, [0, 1, 2]);
    assert.ok(read < 100, 'the reading stopped');
  });

  it('a failed read waits for the commit in flight, commits the pages read before it, then rejects with the read error', async () => {
    let inFlight = false;
    const committed: number[] = [];
    await assert.rejects(commitInGroups(pagesOf(10, { failAt: 4 }), (p) => p.rows.length, async (g) => {
      inFlight = true;
      for (let i = 0; i < 20; i++) await tick();
      inFlight = false;
      committed.push(...g.map((p) => p.n));
    }, { minRows: 10 }), /read failed/);
    assert.equal(inFlight, false, 'returned while a commit was running');
    assert.deepEqual(committed, [0, 1, 2, 3]);
  });

  it('a failed read before minRows commits the pages read so far', async () => {
    const groups: number[][] = [];
    await assert.rejects(commitInGroups(pagesOf(10, { failAt: 3 }), (p) => p.rows.length, async (g) => {
      groups.push(g.map((p) => p.n));
    }, { lingerMs: MINUTE }), /read failed/);
    assert.deepEqual(groups, [[0, 1, 2]]);
  });

  it('a commit of the pages read before a failed read that fails rejects with the commit error', async () => {
    await assert.rejects(commitInGroups(pagesOf(10, { failAt: 3 }), (p) => p.rows.length, async () => {
      throw new Error('disk full');
    }, { lingerMs: MINUTE }), /disk full/);
  });

  it('rowsOf keeps a lone page\'s rows and joins a group\'s in order', () => {
    const one = page(1, 3);
    assert.equal(rowsOf([one]), one.rows);
    assert.deepEqual(rowsOf([page(1, 2), page(2, 1)]).map((r) => (r as { n: number }).n), [1, 1, 2]);
  });
});
