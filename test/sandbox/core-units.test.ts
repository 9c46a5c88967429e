// Pure parts of the sandbox core: options, fault specs, tokens, router, tenant ids. No sockets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTenants, monotonicClock, tenantPublicId } from '../../src/sandbox/context.ts';
import { formatFaultSpec, parseFaultSpec, validateFaultRates } from '../../src/sandbox/faults-spec.ts';
import { applyFaultPatch, pickFault } from '../../src/sandbox/faults.ts';
import { resolveOptions } from '../../src/sandbox/options.ts';
import { Router } from '../../src/sandbox/router.ts';
import { TokenIssuer } from '../../src/sandbox/tokens.ts';
import type { Route } from '../../src/sandbox/contracts.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('options', () => {
  it('fills the documented defaults', () => {
    const o = resolveOptions();
    assert.deepEqual(
      { port: o.port, host: o.host, seed: o.seed, scale: o.scale, latencyMs: o.latencyMs, tokenTtlSeconds: o.tokenTtlSeconds,
        totalCap: o.totalCap, viaBudget: o.viaBudget, churnRate: o.churnRate, maxBodyBytes: o.maxBodyBytes, faults: o.faults },
      { port: 0, host: '127.0.0.1', seed: 42, scale: 1000, latencyMs: 0, tokenTtlSeconds: 900, totalCap: 100000,
        viaBudget: 10000, churnRate: 0, maxBodyBytes: 10 * 1024 * 1024, faults: {} },
    );
  });

  it('refuses out-of-range values with a sentence naming the option', () => {
    assert.throws(() => resolveOptions({ port: 70000 }), /port must be an integer from 0 to 65535/);
    assert.throws(() => resolveOptions({ seed: 1.5 }), /seed must be an integer/);
    assert.throws(() => resolveOptions({ tokenTtlSeconds: -1 }), /tokenTtlSeconds/);
    assert.throws(() => resolveOptions({ churnRate: Number.NaN }), /churnRate/);
    assert.throws(() => resolveOptions({ faults: { '500': 2 } }), /rate of '500'/);
    assert.throws(() => resolveOptions({ available: { D25: true } as never }), /unknown dataset code 'D25'/);
    assert.throws(() => resolveOptions({ host: ' ' }), /host/);
  });
});

describe('fault spec', () => {
  it('parses the documented --faults example and formats it back', () => {
    const rates = parseFaultSpec('500=0.1,reset=0.02');
    assert.deepEqual(rates, { '500': 0.1, reset: 0.02 });
    assert.equal(formatFaultSpec(rates), '500=0.1,reset=0.02');
    assert.deepEqual(parseFaultSpec(''), {});
  });

  it('refuses unknown kinds, bad rates, repeats and totals above 1', () => {
    assert.throws(() => parseFaultSpec('502=0.1'), /unknown fault kind '502'/);
    assert.throws(() => parseFaultSpec('500=abc'), /must be a number from 0 to 1, got 'abc'/);
    assert.throws(() => parseFaultSpec('500=0x1'), /must be a number from 0 to 1, got '0x1'/);
    assert.deepEqual(parseFaultSpec('500=.5,reset=0.25'), { '500': 0.5, reset: 0.25 });
    assert.throws(() => parseFaultSpec('500=1.5'), /from 0 to 1/);
    assert.throws(() => parseFaultSpec('500'), /not KIND=RATE/);
    assert.throws(() => parseFaultSpec('500=0.1,500=0.2'), /given twice/);
    assert.throws(() => parseFaultSpec('500=0.6,503=0.6'), /may not exceed 1/);
    assert.throws(() => validateFaultRates([0.1]), /must be an object/);
  });

  it('draws one exclusive outcome per request', () => {
    const rates = { '500': 0.25, '503': 0.25, reset: 0.25 };
    assert.equal(pickFault(rates, () => 0.1), '500');
    assert.equal(pickFault(rates, () => 0.3), '503');
    assert.equal(pickFault(rates, () => 0.6), 'reset');
    assert.equal(pickFault(rates, () => 0.8), undefined);
    assert.equal(pickFault({}, () => 0), undefined);
  });

  it('applies a live patch atomically: nothing changes when any part is invalid', () => {
    const live = { latencyMs: 0, faults: { '500': 0.1 }, tokenTtlSeconds: 900 };
    assert.throws(() => applyFaultPatch(live, { latencyMs: 5, faults: { nope: 1 } }), /unknown fault kind/);
    assert.throws(() => applyFaultPatch(live, { latency: 5 }), /unknown setting 'latency'/);
    assert.deepEqual(live, { latencyMs: 0, faults: { '500': 0.1 }, tokenTtlSeconds: 900 });
    applyFaultPatch(live, { tokenTtlSeconds: 1, faults: {} });
    assert.deepEqual(live, { latencyMs: 0, faults: {}, tokenTtlSeconds: 1 });
  });
});

describe('tokens', () => {
  const [demo] = createTenants(42);
  let now = 1_000_000;
  const issuer = new TokenIssuer(() => 60, () => now);

  it('issues HS256 JWTs with lenderId, typ, iat and exp from the live ttl', () => {
    const token = issuer.issue(demo!, 'access');
    const [header, payload] = token.split('.');
    assert.deepEqual(JSON.parse(Buffer.from(header!, 'base64url').toString()), { alg: 'HS256', typ: 'JWT' });
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    assert.equal(claims.lenderId, demo!.lenderPublicId);
    assert.equal(claims.typ, 'access');
    assert.equal(claims.exp - claims.iat, 60);
    assert.equal(issuer.verify(token, 'access').ok, true);
  });

  it('rejects expired, wrong-type, forged, alg-swapped and other-secret tokens', () => {
    const access = issuer.issue(demo!, 'access');
    const refresh = issuer.issue(demo!, 'refresh');
    assert.equal((issuer.verify(refresh, 'access') as { reason: string }).reason, 'wrong-type');
    assert.equal((issuer.verify(access, 'refresh') as { reason: string }).reason, 'wrong-type');

    const [h, p, s] = access.split('.') as [string, string, string];
    const tampered = JSON.parse(Buffer.from(p, 'base64url').toString());
    tampered.lenderId = 'someone-else';
    assert.equal((issuer.verify(`${h}.${Buffer.from(JSON.stringify(tampered)).toString('base64url')}.${s}`, 'access') as { reason: string }).reason, 'signature');
    // Other texts of the same signature bytes: characters base64url decoding skips, spare bits.
    const last = s.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sameBytes = [...alphabet].filter((c) => c !== last && Buffer.from(s.slice(0, -1) + c, 'base64url').equals(Buffer.from(s, 'base64url')));
    assert.equal(sameBytes.length, 3, 'a 32-byte signature leaves 2 spare bits in its last character');
    for (const signature of [`${s}!`, `${s}=`, `${s}*`, ...sameBytes.map((c) => s.slice(0, -1) + c)]) {
      assert.equal((issuer.verify(`${h}.${p}.${signature}`, 'access') as { reason: string }).reason, 'signature', signature);
    }
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    assert.equal((issuer.verify(`${none}.${p}.`, 'access') as { reason: string }).reason, 'malformed');
    assert.equal((issuer.verify('not-a-jwt', 'access') as { reason: string }).reason, 'malformed');
    assert.equal(new TokenIssuer(() => 60, () => now).verify(access, 'access').ok, false);

    now += 60;
    assert.equal((issuer.verify(access, 'access') as { reason: string }).reason, 'expired');
    assert.equal(issuer.verify(refresh, 'refresh').ok, true, 'refresh tokens outlive access tokens');
  });
});

describe('router', () => {
  const handler = () => ({ status: 200, body: null });
  const route = (method: 'GET' | 'POST', pattern: string): Route => ({ method, pattern, auth: 'none', handler });
  const router = new Router([
    route('GET', '/x/:id/exports/:section/:dataset'),
    route('GET', '/x/:id/exports/catalog'),
    route('POST', '/x/:id/accounts'),
  ]);

  it('matches with decoded params and prefers literal segments', () => {
    const m = router.match('GET', '/x/a%20b/exports/catalog');
    assert.equal(m.kind, 'found');
    assert.equal(m.kind === 'found' && m.route.pattern, '/x/:id/exports/catalog');
    assert.deepEqual(m.kind === 'found' && m.params, { id: 'a b' });
  });

  it('tells 404 from 405 and lists the allowed methods', () => {
    assert.deepEqual(router.match('GET', '/x/1/accounts'), { kind: 'method-not-allowed', allowed: ['POST'], auth: 'none' });
    assert.deepEqual(router.match('GET', '/x/1/nothing'), { kind: 'not-found' });
    assert.deepEqual(router.match('GET', '/x//exports/catalog'), { kind: 'not-found' });
    assert.deepEqual(router.match('POST', '/x/%E0%A4%A/accounts'), { kind: 'not-found' });
    assert.throws(() => router.add(route('POST', '/x/:id/accounts')), /two routes/);
  });
});

describe('tenants and clock', () => {
  it('derives UUID lenderPublicIds from the seed, with fresh passwords per start', () => {
    const a = createTenants(42);
    const b = createTenants(42);
    assert.deepEqual(a.map((t) => t.lender), ['demo', 'other']);
    assert.match(a[0]!.lenderPublicId, UUID);
    assert.equal(a[0]!.lenderPublicId, b[0]!.lenderPublicId);
    assert.notEqual(a[0]!.lenderPublicId, a[1]!.lenderPublicId);
    assert.notEqual(tenantPublicId(42, 'demo'), tenantPublicId(43, 'demo'));
    assert.notEqual(a[0]!.password, b[0]!.password);
  });

  it('never goes backwards nor reads before the floor', () => {
    const clock = monotonicClock('2999-01-01T00:00:00.000Z');
    const first = clock().getTime();
    assert.ok(first >= Date.parse('2999-01-01T00:00:00.000Z'));
    for (let i = 0; i < 1000; i++) assert.ok(clock().getTime() >= first);
  });
});
