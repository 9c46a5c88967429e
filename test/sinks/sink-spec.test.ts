// `--to`: what each form names, and the sentence each mistake gets (a ConfigError: exit 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { ConfigError } from '../../src/core/errors.ts';
import { parseSinkSpec } from '../../src/sinks/sink-spec.ts';

test('each form names its target; a relative file or folder is resolved', () => {
  assert.deepEqual(parseSinkSpec('duckdb:out/lender.duckdb'), { kind: 'duckdb', path: resolve('out/lender.duckdb') });
  assert.deepEqual(parseSinkSpec('DuckDB:/tmp/x.duckdb'), { kind: 'duckdb', path: '/tmp/x.duckdb' });
  assert.deepEqual(parseSinkSpec('ndjson:out'), { kind: 'ndjson', dir: resolve('out') });
  assert.deepEqual(parseSinkSpec('postgres:'), { kind: 'postgres', url: undefined });
  assert.deepEqual(parseSinkSpec('postgresql://etl@db.example:5433/lake'), { kind: 'postgres', url: 'postgresql://etl@db.example:5433/lake' });
});

test('an empty file or folder, an unknown scheme and a password in the URL are refused, saying why', () => {
  const refusals: [string, RegExp][] = [
    ['duckdb:', /^--to duckdb: needs a file, e\.g\. duckdb:lender\.duckdb$/],
    ['ndjson:', /^--to ndjson: needs a folder, e\.g\. ndjson:out\/$/],
    ['lender.duckdb', /^--to must be duckdb:FILE, ndjson:DIR or postgres:\/\/…, not a bare name$/],
    ['mysql://root:hunter2@db/x', /^--to must be duckdb:FILE, ndjson:DIR or postgres:\/\/…, not 'mysql:…'$/],
    ['postgres://etl:hunter2@db/lake', /^--to: a password in the URL would be left in shell history/],
    // A parameter the sink does not read would be a setting silently ignored: refused before anything runs.
    ['postgres://etl@db/lake?sslmode=require&connect_timeout=5', /^the PostgreSQL URL parameter 'connect_timeout' is not supported \(supported: host, port, user, dbname, sslmode, sslrootcert, application_name\)$/],
  ];
  for (const [spec, message] of refusals) {
    assert.throws(() => parseSinkSpec(spec), (error: unknown) => {
      assert.ok(error instanceof ConfigError, spec);
      assert.match(error.message, message, spec);
      assert.ok(!error.message.includes('hunter2'), `${spec}: no password echoed`);
      return true;
    });
  }
});
