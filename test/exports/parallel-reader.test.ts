// The ordered reader on its own: tasks are scripted generators that count what they were asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ParallelReader, type Previous, type ReadEvent, type SlotState } from '../../src/exports/parallel-reader.ts';

interface Probe {
  name: string;
  /** Items the generator has produced (next() calls answered with an item). */
  produced: number;
  opened: boolean;
  closed: boolean;
  /** Generators running (opened, not finished) when this one opened. */
  open(): AsyncGenerator<string>;
}

let running = 0;
let maxRunning = 0;

/** A task of `count` items, each after `delay` turns of the loop; throws after `failAfter` items. */
function probe(name: string, count: number, { delay = 1, failAfter }: { delay?: number; failAfter?: number } = {}): Probe {
  const p: Probe = {
    name, produced: 0, opened: false, closed: false,
    async *open() {
      p.opened = true;
      running += 1;
      maxRunning = Math.max(maxRunning, running);
      try {
        for (let i = 0; i < count; i += 1) {
          for (let t = 0; t < delay; t += 1) await turn();
          if (i === failAfter) throw new Error(`${name} failed`);
          p.produced += 1;
          yield `${name}${i}`;
        }
      } finally {
        running -= 1;
        p.closed = true;
      }
    },
  };
  return p;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const turns = async (n: number) => {
  for (let i = 0; i < n; i += 1) await turn();
};

function reader(tasks: Probe[], concurrency: number, prefetch: number, signal?: AbortSignal) {
  let i = 0;
  const seen: (Previous<Probe> | undefined)[] = [];
  const r = new ParallelReader<Probe, string>({
    nextTask: (previous) => {
      seen.push(previous && { task: previous.task, state: previous.state });
      return tasks[i++] ?? null;
    },
    concurrency, prefetch, ...(signal && { signal }),
  });
  return { r, seen };
}

const show = (e: ReadEvent<Probe, string>) => (e.end === true ? `${e.task.name}.end` : e.item);

test('items come in task order, each task ended after its items, whatever the timing', async () => {
  for (const [concurrency, prefetch] of [[1, 0], [1, 1], [3, 0], [3, 2], [5, 4]] as const) {
    running = 0;
    maxRunning = 0;
    const tasks = [probe('a', 3, { delay: 5 }), probe('b', 0), probe('c', 4, { delay: 1 }), probe('d', 2, { delay: 3 }), probe('e', 1)];
    const got: string[] = [];
    for await (const e of reader(tasks, concurrency, prefetch).r) got.push(show(e));
    assert.deepEqual(got, ['a0', 'a1', 'a2', 'a.end', 'b.end', 'c0', 'c1', 'c2', 'c3', 'c.end', 'd0', 'd1', 'd.end', 'e0', 'e.end'], `${concurrency}/${prefetch}`);
    assert.ok(tasks.every((t) => t.closed));
    assert.ok(maxRunning <= concurrency, `at most ${concurrency} open at once, saw ${maxRunning}`);
    if (concurrency > 1 && prefetch > 0) assert.ok(maxRunning > 1, 'tasks are read at once');
  }
});

test('a paused consumer: the head read once on demand plus prefetch ahead, the others prefetch, concurrency tasks open', async () => {
  for (const [concurrency, prefetch] of [[1, 0], [1, 2], [3, 0], [3, 2]] as const) {
    const tasks = ['a', 'b', 'c', 'd', 'e'].map((n) => probe(n, 20));
    const { r } = reader(tasks, concurrency, prefetch);
    assert.equal(tasks.filter((t) => t.opened).length, 0, 'nothing before the first read');
    assert.equal(show((await r.next()).value!), 'a0');
    await turns(30);
    assert.equal(tasks[0]!.produced, 1 + prefetch, `head ${concurrency}/${prefetch}`);
    for (const t of tasks.slice(1, concurrency)) assert.equal(t.produced, prefetch, `${t.name} ${concurrency}/${prefetch}`);
    assert.equal(tasks.filter((t) => t.produced > 0 || t.opened).length, prefetch === 0 ? 1 : concurrency);
    for (const t of tasks.slice(concurrency)) assert.equal(t.produced, 0);
    await r.return();
  }
});

test('with prefetch 0 the head is read only on demand, one item per next()', async () => {
  const a = probe('a', 5);
  const { r } = reader([a], 1, 0);
  for (let i = 0; i < 3; i += 1) {
    await r.next();
    await turns(10);
    assert.equal(a.produced, i + 1);
  }
  await r.return();
});

test('a failing task fails the read after the items before it, and closes the others', async () => {
  const tasks = [probe('a', 2), probe('b', 5, { failAfter: 2, delay: 2 }), probe('c', 50), probe('d', 50)];
  const { r } = reader(tasks, 3, 2);
  const got: string[] = [];
  await assert.rejects(async () => {
    for await (const e of r) got.push(show(e));
  }, /b failed/);
  assert.deepEqual(got, ['a0', 'a1', 'a.end', 'b0', 'b1']);
  await turns(10);
  assert.ok(tasks[2]!.closed && tasks[3]!.closed, 'the tasks read ahead were closed');
  assert.ok(tasks[3]!.produced < 50);
  assert.deepEqual(await r.next(), { done: true, value: undefined }, 'a failed read stays ended');
});

test('a failure in a task read ahead waits for the head: the head\'s items still arrive first', async () => {
  const tasks = [probe('a', 4, { delay: 6 }), probe('b', 3, { failAfter: 0 })];
  const got: string[] = [];
  await assert.rejects(async () => {
    for await (const e of reader(tasks, 2, 1).r) got.push(show(e));
  }, /b failed/);
  assert.deepEqual(got, ['a0', 'a1', 'a2', 'a3', 'a.end']);
});

test('returning early closes every open generator, also one with a read in flight', async () => {
  const tasks = [probe('a', 10), probe('b', 10, { delay: 4 }), probe('c', 10, { delay: 8 }), probe('d', 10)];
  const { r } = reader(tasks, 3, 1);
  await r.next();
  await turn();
  await r.return();
  await turns(20);
  assert.deepEqual(tasks.map((t) => t.closed), [true, true, true, false]);
  assert.equal(tasks[3]!.opened, false, 'no task is planned after the return');
  assert.deepEqual(await r.next(), { done: true, value: undefined });
});

test('breaking out of for await closes the generators', async () => {
  const tasks = [probe('a', 10), probe('b', 10)];
  for await (const e of reader(tasks, 2, 1).r) if (show(e) === 'a3') break;
  await turns(10);
  assert.ok(tasks.every((t) => t.closed));
});

test('an abort closes every open generator and fails a waiting read with the reason', async () => {
  const controller = new AbortController();
  const tasks = [probe('a', 10, { delay: 50 }), probe('b', 10)];
  const { r } = reader(tasks, 2, 1, controller.signal);
  const waiting = r.next();
  await turns(3);
  controller.abort(new Error('stop'));
  await assert.rejects(waiting, /stop/);
  await turns(60);
  assert.ok(tasks.every((t) => t.closed));
  await assert.rejects(r.next(), /stop/);
});

test('the next task is planned from the previous one: ended when it was read to its end, else still in flight', async () => {
  const states = async (concurrency: number): Promise<(SlotState | undefined)[]> => {
    const { r, seen } = reader([probe('a', 2), probe('b', 2), probe('c', 0)], concurrency, 1);
    for await (const _ of r) { /* drain */ }
    return seen.map((p) => p?.state);
  };
  // One at a time, a task is planned once the one before has left: it ended.
  assert.deepEqual(await states(1), [undefined, 'ended', 'ended', 'ended']);
  // Three at once, they are planned before the one before them was read.
  const parallel = await states(3);
  assert.equal(parallel[0], undefined);
  assert.ok(parallel.slice(1, 3).every((s) => s === 'ready' || s === 'reading'), String(parallel));
});

test('a task that cannot be planned fails the read after the tasks planned before it', async () => {
  let i = 0;
  const a = probe('a', 3, { delay: 3 });
  const r = new ParallelReader<Probe, string>({
    nextTask: () => {
      if (i++ === 0) return a;
      throw new Error('no plan');
    },
    concurrency: 2, prefetch: 1,
  });
  const got: string[] = [];
  await assert.rejects(async () => {
    for await (const e of r) got.push(show(e));
  }, /no plan/);
  assert.deepEqual(got, ['a0', 'a1', 'a2', 'a.end']);
});

test('one next() at a time: a second one before the first is answered is refused', async () => {
  const { r } = reader([probe('a', 3)], 1, 1);
  const first = r.next();
  await assert.rejects(r.next(), /one next\(\) at a time/);
  assert.equal(show((await first).value!), 'a0');
  assert.equal(show((await r.next()).value!), 'a1');
  await r.return();
});
