// The transport takes undici's agent from its own module, so a client never loads undici's
// main module (fetch, WebSocket, mocks...); the agent is undici's own, with its request API.
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

test('loading the client does not load undici\'s main module', () => {
  const script = `
    import { createRequire } from 'node:module';
    await import('./src/client/client.ts');
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((p) => p.includes('/node_modules/undici/'));
    console.log(JSON.stringify({ agent: loaded.some((p) => p.endsWith('/lib/dispatcher/agent.js')), main: loaded.some((p) => p.endsWith('/undici/index.js')) }));
  `;
  const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  assert.deepEqual(JSON.parse(out.stdout.trim().split('\n').at(-1)!), { agent: true, main: false });
});
