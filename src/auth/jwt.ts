// Reading a JWT's timing claims to refresh before it expires. The signature is not verified:
// the client is not the audience of its own token, it only needs a hint of when it lapses
// (a 401 is still handled if the hint is wrong).

export interface JwtTimes {
  /** Seconds since the epoch. */
  exp?: number;
  iat?: number;
}

/** The payload of a JWT, or undefined when the token is not a readable JWT. */
export function decodeJwtPayload(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[1] === undefined || parts[1] === '') return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? (payload as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function jwtTimes(token: string): JwtTimes {
  const payload = decodeJwtPayload(token);
  const times: JwtTimes = {};
  if (typeof payload?.exp === 'number' && Number.isFinite(payload.exp)) times.exp = payload.exp;
  if (typeof payload?.iat === 'number' && Number.isFinite(payload.iat)) times.iat = payload.iat;
  return times;
}

/** Refresh no later than this long before expiry, and never later than at 80% of the lifetime. */
export const REFRESH_MARGIN_MS = 30_000;

/**
 * When (local clock, ms) to renew a token received at `receivedAt`. The lifetime comes from
 * exp - iat when both are present, so a skew between our clock and the server's does not
 * matter; without iat it falls back to exp against our clock. Undefined when the token has no
 * usable exp, in which case only a 401 triggers a refresh.
 */
export function refreshDueAt(token: string, receivedAt: number): number | undefined {
  const { exp, iat } = jwtTimes(token);
  if (exp === undefined) return undefined;
  if (iat === undefined) {
    const left = exp * 1000 - receivedAt;
    return left > 0 ? receivedAt + left - Math.min(REFRESH_MARGIN_MS, left * 0.2) : undefined;
  }
  // iat and exp are whole seconds: a token issued at 12.9 s says iat 12, so up to a second of
  // its nominal lifetime is gone by the time it arrives. A token that may have none left is
  // renewed at its first use.
  const lifetimeMs = (exp - iat) * 1000 - 1000;
  if (lifetimeMs <= 0) return receivedAt;
  return receivedAt + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs * 0.2);
}
