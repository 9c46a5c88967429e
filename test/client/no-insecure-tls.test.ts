// No code path turns certificate verification off: a grep over the sources. And every place
// the client opens connections says rejectUnauthorized: true itself, since Node's default can be
// turned off by an environment variable (tls-env-override.test.ts runs that case).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/** Where outbound HTTPS/TLS connections are made (the sandbox's server is not among them). */
const OPENS_CONNECTIONS = /new\s+(?:Agent|Pool|Client|ProxyAgent|EnvHttpProxyAgent)\s*\(|https\.(?:request|get)\s*\(|tls\.connect\s*\(|\bfetch\s*\(/;
const EXPLICIT_CHECK = /rejectUnauthorized:\s*true/;

const FORBIDDEN = [
  /rejectUnauthorized\s*[:=]\s*(false|0|!1|''|"")/,
  /NODE_TLS_REJECT_UNAUTHORIZED/,
  /checkServerIdentity\s*[:=]\s*\(\s*\)\s*=>/,
  /insecureSkipVerify|allowUnauthorized/i,
];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (/\.(ts|mts|js|mjs|cjs)$/.test(name)) out.push(path);
  }
  return out;
}

describe('certificate checks stay on', () => {
  it('the patterns catch what they are meant to catch', () => {
    for (const sample of ['{ rejectUnauthorized: false }', 'opts.rejectUnauthorized = false', "process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'", 'checkServerIdentity: () => undefined']) {
      assert.ok(FORBIDDEN.some((re) => re.test(sample)), sample);
    }
  });

  it('no file in src/ disables certificate verification', () => {
    const files = sources('src');
    assert.ok(files.length > 20, 'found the sources');
    const offenders = files.filter((file) => FORBIDDEN.some((re) => re.test(readFileSync(file, 'utf8'))));
    assert.deepEqual(offenders, []);
  });

  it('every client file that opens connections sets rejectUnauthorized: true explicitly', () => {
    assert.ok(OPENS_CONNECTIONS.test('this.#agent = new Agent({'), 'the pattern sees an undici agent');
    const clientSide = sources('src').filter((file) => !file.startsWith(join('src', 'sandbox')));
    const opening = clientSide.filter((file) => OPENS_CONNECTIONS.test(readFileSync(file, 'utf8')));
    assert.ok(opening.includes(join('src', 'core', 'transport.ts')), `found: ${opening.join(', ')}`);
    assert.deepEqual(opening.filter((file) => !EXPLICIT_CHECK.test(readFileSync(file, 'utf8'))), []);
  });
});
