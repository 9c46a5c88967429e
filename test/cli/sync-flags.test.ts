// `lender sync` flags of the PostgreSQL sink that are checked before anything connects: --schema
// and --lease out of their bounds, and a --to URL parameter the sink does not read, are usage
// errors (exit 2, pointing to --help), named as the flag or the parameter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runLender } from '../helpers/memory-io.ts';

// Nothing listens on port 1: a flag that were not refused before connecting would fail otherwise.
const TO = ['sync', '--to', 'postgres://loader@127.0.0.1:1/warehouse', '--datasets', 'D07'];
const env = { HOME: '/nonexistent', PGPASSWORD: 'unused-password' };

test('--schema empty or over 63 bytes: exit 2, the flag named, pointing to --help', async () => {
  for (const schema of ['', 'x'.repeat(64), 'é'.repeat(32)]) {
    const r = await runLender([...TO, '--schema', schema], env);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /^lender sync: --schema must be a name of 1 to 63 bytes/);
    assert.match(r.err, /Run 'lender sync --help' for usage\./);
    assert.equal(r.out, '');
  }
});

test('--lease below 100 ms or above 24 hours: exit 2, the flag and the real bound named', async () => {
  for (const [lease, bound] of [['0', /--lease must be at least 100 ms, not '0'/], ['50ms', /--lease must be at least 100 ms, not '50ms'/],
    ['10000h', /--lease must be at most 24h \(86400000 ms\), not '10000h'/], ['P2D', /--lease must be at most 24h/]] as const) {
    const r = await runLender([...TO, '--lease', lease], env);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, bound);
    assert.match(r.err, /Run 'lender sync --help' for usage\./);
  }
});

test('--to with a URL parameter the sink does not read: exit 2, named, pointing to --help, before anything connects', async () => {
  const r = await runLender(['sync', '--to', 'postgres://loader@127.0.0.1:1/warehouse?foo=bar', '--datasets', 'D07'], env);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /^lender sync: the PostgreSQL URL parameter 'foo' is not supported \(supported: [^)]+\)\nRun 'lender sync --help' for usage\.\n$/);
  assert.equal(r.out, '');
});

