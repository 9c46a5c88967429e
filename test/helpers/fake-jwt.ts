// Tokens shaped like the service's (a JWT whose payload has lenderId, typ, iat, exp), so the
// client's expiry hint works against a test server; unsigned, never valid anywhere.
function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function fakeJwt(lenderId: string, typ: string, ttlSeconds: number, now = Math.floor(Date.now() / 1000)): string {
  return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ lenderId, typ, iat: now, exp: now + ttlSeconds })}.c2ln`;
}
