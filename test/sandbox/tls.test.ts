// The sandbox's certificate, read back through OpenSSL (node:crypto's X509Certificate): what a
// client checks when it trusts the PEM as its CA. The handshake itself is exercised by every
// test that talks to a sandbox.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateTls } from '../../src/sandbox/tls.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const HOUR = 3600_000;
const DAY = 24 * HOUR;

describe('sandbox certificate', () => {
  it('is a self-signed CA for the loopback names, with an ECDSA P-256 key that matches it', async () => {
    const before = Date.now();
    const tls = await generateTls('127.0.0.1');
    const cert = new X509Certificate(tls.cert);
    assert.equal(cert.ca, true);
    assert.equal(cert.subject, 'CN=lender-streams sandbox');
    assert.equal(cert.issuer, cert.subject);
    assert.equal(cert.checkIssued(cert), true);
    assert.equal(cert.verify(cert.publicKey), true);
    assert.equal(cert.publicKey.asymmetricKeyType, 'ec');
    assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    const key = createPrivateKey(tls.key);
    assert.equal(cert.checkPrivateKey(key), true);
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    for (const name of ['localhost']) assert.equal(cert.checkHost(name), name);
    for (const ip of ['127.0.0.1', '::1']) assert.equal(cert.checkIP(ip), ip);
    assert.equal(cert.checkHost('example.com'), undefined);
    // Backdated an hour, valid 30 days (the certificate keeps whole seconds).
    const from = Date.parse(cert.validFrom);
    const to = Date.parse(cert.validTo);
    assert.ok(from <= before - HOUR + 1000 && from >= before - HOUR - 60_000, cert.validFrom);
    assert.equal(to - from, 30 * DAY);
  });

  it('names a LAN address or host name it is bound to', async () => {
    assert.equal(new X509Certificate((await generateTls('192.0.2.7')).cert).checkIP('192.0.2.7'), '192.0.2.7');
    const named = new X509Certificate((await generateTls('sandbox.internal')).cert);
    assert.equal(named.checkHost('sandbox.internal'), 'sandbox.internal');
    assert.equal(named.checkHost('localhost'), 'localhost');
  });

  it('makes a new key at every start', async () => {
    const [a, b] = await Promise.all([generateTls(), generateTls()]);
    assert.notEqual(a.key, b.key);
    assert.notEqual(a.cert, b.cert);
  });

  it('leaves no global behind: the helpers tslib puts there as the certificate library loads are removed', () => {
    // In fresh processes: what globals a certificate adds, and (the premise) what loading the
    // library alone adds.
    const added = (code: string): string[] => JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
      const before = new Set(Object.getOwnPropertyNames(globalThis));
      ${code}
      console.log(JSON.stringify(Object.getOwnPropertyNames(globalThis).filter((k) => !before.has(k))));`], { encoding: 'utf8', cwd: ROOT })) as string[];
    const byLibrary = added(`await import('selfsigned');`);
    // Should tslib stop doing so, tls.ts's clean-up has nothing left to do and can go.
    assert.ok(byLibrary.includes('__awaiter') && byLibrary.length >= 30, `loading selfsigned adds tslib's helpers: ${byLibrary.join(' ')}`);
    const tls = new URL('../../src/sandbox/tls.ts', import.meta.url).href;
    assert.deepEqual(added(`const { generateTls } = await import(${JSON.stringify(tls)}); await generateTls(); await generateTls('192.0.2.7');`), []);
  });
});
