// No code path turns certificate verification off: a grep over the sources.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

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
});
