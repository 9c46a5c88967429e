// What loading the client costs: only what every client needs. undici's agent comes from its own
// module (not undici's main module, with fetch, WebSocket, mocks...), and zod, which the account
// schemas are built with, loads with the first account or flag writer, not with the client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent as MainAgent } from 'undici';
import { Agent } from '../../src/core/undici-agent.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('the agent is undici\'s Agent, with the request API', () => {
  assert.equal(Agent, MainAgent);
  assert.equal(typeof new Agent().request, 'function');
});

/** The packages (and undici's main module) a fresh process has loaded after running `code`. */
function loadedAfter(code: string): { undiciMain: boolean; undiciAgent: boolean; zod: boolean } {
  const script = `
    import { createRequire, register } from 'node:module';
    import { MessageChannel } from 'node:worker_threads';
    const { port1, port2 } = new MessageChannel();
    const urls = [];
    port1.on('message', (url) => urls.push(url));
    register('data:text/javascript,' + encodeURIComponent(
      'let port; export function initialize(data) { port = data.port; }' +
      'export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r; }',
    ), { data: { port: port2 }, transferList: [port2] });
    ${code}
    // The hooks' messages come in order: once the resolution of this last import arrives, every
    // one before it has.
    const SENTINEL = 'data:text/javascript,export{}//lender-sentinel';
    const seen = new Promise((resolve) => port1.on('message', (url) => { if (url === SENTINEL) resolve(); }));
    await import(SENTINEL);
    await seen;
    port1.close();
    const cjs = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify({
      undiciMain: cjs.some((p) => p.endsWith('/node_modules/undici/index.js')),
      undiciAgent: cjs.some((p) => p.endsWith('/node_modules/undici/lib/dispatcher/agent.js')),
      zod: urls.some((u) => u.includes('/node_modules/zod/')),
    }));
  `;
  const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { undiciMain: boolean; undiciAgent: boolean; zod: boolean };
}

test('loading the client loads neither undici\'s main module nor zod', () => {
  assert.deepEqual(loadedAfter("await import('./src/client/client.ts');"), { undiciMain: false, undiciAgent: true, zod: false });
});

test('an account writer loads zod before its first record', () => {
  const loaded = loadedAfter(`
    const { createAccountWriter } = await import('./src/accounts/account-writer.ts');
    const writer = createAccountWriter({ upsertAccounts: async () => ({}) }, { flushInterval: 0 });
    writer.on('reject', () => undefined);
    writer.on('error', () => undefined);
    writer.write({ not: 'an account' });
    await new Promise((resolve) => writer.end(resolve));
    if (writer.summary.rejected !== 1) throw new Error('the record was not validated: ' + JSON.stringify(writer.summary));
  `);
  assert.equal(loaded.zod, true);
});
