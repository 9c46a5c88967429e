// undici's HTTP agent without the rest of undici. Its main module loads fetch, WebSocket, caches,
// mocks and proxy agents as well, which this library never uses: about 30 ms of every start on
// Node 20 and 6 MB of a running export's memory (bench/export-rss.ts). The agent and the request
// API are taken from their own modules, joined as undici's main module joins them; should a
// release of undici move them, the main module is used instead.
import { createRequire } from 'node:module';
import type { Agent as UndiciAgent, buildConnector as undiciBuildConnector } from 'undici';

const require = createRequire(import.meta.url);

function loadAgent(): typeof UndiciAgent {
  try {
    const agent = require('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;
    const dispatcher = require('undici/lib/dispatcher/dispatcher.js') as { prototype: object };
    Object.assign(dispatcher.prototype, require('undici/lib/api/index.js') as object);
    if (typeof agent === 'function' && typeof agent.prototype.request === 'function') return agent;
  } catch {
    // moved: below
  }
  return (require('undici') as { Agent: typeof UndiciAgent }).Agent;
}

/** undici's Agent class. */
export const Agent = loadAgent();

function loadConnector(): typeof undiciBuildConnector {
  try {
    const build = require('undici/lib/core/connect.js') as typeof undiciBuildConnector;
    if (typeof build === 'function') return build;
  } catch {
    // moved: below
  }
  return (require('undici') as { buildConnector: typeof undiciBuildConnector }).buildConnector;
}

/** undici's connector: the function that opens an agent's TLS connections. */
export const buildConnector = loadConnector();
