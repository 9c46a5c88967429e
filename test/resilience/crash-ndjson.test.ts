// `lender sync --to ndjson:` SIGKILLed at random instants: on a timer, the instant a data file
// grows (rows appended, their state not yet saved) and the instant a state temp file appears (a
// kill during the state write). After every kill the state file parses; at the end each file
// holds every row of the service exactly once: the resume cuts a file back to the length its
// state recorded, so the page written after the last saved state is not written twice.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SOAK } from '../helpers/resilience.ts';
import { crashAndCompare, fileKill, startCrashSandbox, timerKill, type CrashSandbox } from '../helpers/crash-sync.ts';

const KILLS = SOAK ? 30 : 20;

describe('crash and resume: lender sync --to ndjson: killed with SIGKILL at random instants', () => {
  let env: CrashSandbox;
  let out: string;
  let statePath: string;
  let statesParsed = 0;

  before(async () => {
    env = await startCrashSandbox();
    out = join(env.dir, 'out');
    statePath = join(out, 'state.json');
  });
  after(async () => env?.stop());

  it(`survives ${KILLS} kills: every row exactly once, the state readable after each kill`, async (ctx) => {
    const readLines = (code: string): string[] => {
      const path = join(out, `${code}.ndjson`);
      const text = readFileSync(path, 'utf8');
      assert.ok(text === '' || text.endsWith('\n'), `${code}: the file ends with a whole line`);
      return text.split('\n').slice(0, -1);
    };
    const run = await crashAndCompare(ctx, env, {
      args: ['--to', `ndjson:${out}`, '--state', statePath],
      points: [
        timerKill,
        fileKill('rows-appended', out, (f) => f.endsWith('.ndjson'), 8),
        fileKill('state-write', out, (f) => f.endsWith('.tmp'), 40),
      ],
      async afterKill() {
        if (!existsSync(statePath)) return;
        const parsed = JSON.parse(readFileSync(statePath, 'utf8')) as { version: number; datasets: object };
        assert.ok(parsed.version === 1 && typeof parsed.datasets === 'object', 'the state file parses after a kill');
        env.scan.capture('state after a kill', readFileSync(statePath));
        statesParsed += 1;
      },
      readBack: async (code) => readLines(code),
      rowIdentity: (_code, row) => JSON.stringify(row),
    }, KILLS);
    assert.equal(run.kills, KILLS);
    env.scan.captureFolder('crash sync output', out);
    const litter = readdirSync(out).filter((n) => n.endsWith('.tmp'));
    ctx.diagnostic(`kills=${run.kills} ${JSON.stringify(run.byPoint)} rows=${run.rows} (final run ${run.finalRows}) lost=0 duplicated=0 statesParsed=${statesParsed} tmpLeft=${litter.length}`);
  });

  it('printed and wrote no password or token', () => {
    assert.ok(env.scan.count > 0);
    assert.deepEqual(env.scan.leaks(), []);
  });
});
