// HS256 JWTs made with node:crypto. Access tokens carry the lender's public id (`lenderId`,
// as the service's access tokens do); refresh tokens are typed so neither can stand in for the other.
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Tenant } from './contracts.ts';

export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  readonly lenderId: string;
  /** The {lender} path segment the token was issued for. */
  readonly sub: string;
  readonly typ: TokenType;
  readonly iat: number;
  readonly exp: number;
  readonly jti: string;
}

export type VerifyResult =
  | { readonly ok: true; readonly claims: TokenClaims }
  | { readonly ok: false; readonly reason: 'malformed' | 'signature' | 'expired' | 'wrong-type'; readonly claims?: TokenClaims };

/** Refresh tokens outlive access tokens; a day, or four access lifetimes when those are longer. */
export function refreshTtlSeconds(accessTtlSeconds: number): number {
  return Math.max(24 * 3600, accessTtlSeconds * 4);
}

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

function isClaims(value: unknown): value is TokenClaims {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return typeof c.lenderId === 'string' && typeof c.sub === 'string'
    && (c.typ === 'access' || c.typ === 'refresh')
    && Number.isFinite(c.iat) && Number.isFinite(c.exp) && typeof c.jti === 'string';
}

function parseJson(segment: string): unknown {
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

export class TokenIssuer {
  // Random per start: tokens of an earlier sandbox run must not open this one.
  readonly #secret: Buffer;
  readonly #accessTtl: () => number;
  readonly #nowSeconds: () => number;

  /** `accessTtl` is read at every issue so POST /__sandbox/faults changes take effect live.
   * Tokens use the wall clock, not the sandbox data clock: clients compare `exp` with theirs. */
  constructor(accessTtl: () => number, nowSeconds: () => number = () => Math.floor(Date.now() / 1000), secret: Buffer = randomBytes(32)) {
    this.#accessTtl = accessTtl;
    this.#nowSeconds = nowSeconds;
    this.#secret = secret;
  }

  issue(tenant: Tenant, typ: TokenType): string {
    const iat = this.#nowSeconds();
    const ttl = typ === 'access' ? this.#accessTtl() : refreshTtlSeconds(this.#accessTtl());
    const claims: TokenClaims = { lenderId: tenant.lenderPublicId, sub: tenant.lender, typ, iat, exp: iat + ttl, jti: randomUUID() };
    const unsigned = `${HEADER}.${base64url(JSON.stringify(claims))}`;
    return `${unsigned}.${this.#sign(unsigned).toString('base64url')}`;
  }

  /** Checks signature, algorithm, type and expiry, in that order (a forged token says nothing
   * trustworthy about its type, so the signature comes first). */
  verify(token: string, expected: TokenType): VerifyResult {
    const parts = token.split('.');
    if (parts.length !== 3) return { ok: false, reason: 'malformed' };
    const [header, payload, signature] = parts as [string, string, string];
    const head = parseJson(header) as { alg?: unknown } | undefined;
    // Only HS256: accepting the header's alg blindly is the classic `alg: none` hole.
    if (head?.alg !== 'HS256') return { ok: false, reason: 'malformed' };
    // The signature's text, not its decoded bytes: base64url decoding skips characters outside its
    // alphabet and ignores the last character's spare bits, so other texts would decode the same.
    const given = Buffer.from(signature);
    const wanted = Buffer.from(this.#sign(`${header}.${payload}`).toString('base64url'));
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return { ok: false, reason: 'signature' };
    const claims = parseJson(payload);
    if (!isClaims(claims)) return { ok: false, reason: 'malformed' };
    if (claims.typ !== expected) return { ok: false, reason: 'wrong-type', claims };
    if (this.#nowSeconds() >= claims.exp) return { ok: false, reason: 'expired', claims };
    return { ok: true, claims };
  }

  #sign(unsigned: string): Buffer {
    return createHmac('sha256', this.#secret).update(unsigned).digest();
  }
}
