// Cutting secrets out of text that is about to be printed. A server's words are quoted in error
// messages, and a gateway that echoes the request (its Authorization header, the login body)
// would otherwise put the token or password on the user's terminal. Two kinds are cut: values a
// token session knows (password, access and refresh tokens) and anything shaped like a credential.

/** What replaces a secret, so a reader knows something was cut. */
export const REDACTED = '[redacted]';

/** Shorter known values would cut ordinary words out of messages. */
export const MIN_SECRET_LENGTH = 6;

// Credential-shaped text, also what the leak scanner looks for (src/session/secrets.ts), so the
// two cannot disagree. Not global: `.test` keeps no state between calls.
//
// Bearer: the scheme, whitespace or %20 (an echoed URL), an optional quote (raw, JSON-escaped or
// %-encoded), then 8 or more token68 characters ("+", "/", "=" may come %-encoded). The length
// floor keeps prose ("Missing bearer token.", "The Bearer scheme") whole. A credential already cut
// as a known secret counts, so the scheme goes too: "Bearer [redacted]" still reads as a credential.
export const BEARER_CREDENTIAL = /Bearer(?:\s|%20)+(\\?["'`]|%2[27])?(?:(?:[A-Za-z0-9\-._~+/]|%2[BF]){8,}(?:=|%3D)*|\[redacted\])\1?/i;
/** JWTs (base64url of '{"' is 'eyJ'), whole or cut short after the payload. */
export const JWT_LIKE = /eyJ[\w-]*\.[\w-]+(?:\.[\w-]*)?/;

const BEARER_ALL = new RegExp(BEARER_CREDENTIAL.source, 'gi');
const JWT_ALL = new RegExp(JWT_LIKE.source, 'g');

/** Known secrets long enough to look for, longest first so a secret containing another goes whole. */
export function usableSecrets(secrets: Iterable<string | undefined>): string[] {
  const out = new Set<string>();
  for (const s of secrets) if (typeof s === 'string' && s.length >= MIN_SECRET_LENGTH) out.add(s);
  return [...out].sort((a, b) => b.length - a.length);
}

/** A secret as it appears raw, inside a JSON string, or in a URL. */
function spellings(secret: string): string[] {
  return [...new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])];
}

/** `text` with the known secrets and anything that looks like a bearer token or JWT replaced by REDACTED. */
export function redactText(text: string, known: Iterable<string | undefined> = []): string {
  let out = text;
  for (const secret of usableSecrets(known)) {
    for (const s of spellings(secret)) if (out.includes(s)) out = out.split(s).join(REDACTED);
  }
  return out.replace(BEARER_ALL, REDACTED).replace(JWT_ALL, REDACTED);
}

/** Strings in plain data (failures lists, say), redacted; anything else is left as it is. */
function redactData(value: unknown, known: readonly string[], depth: number): unknown {
  if (typeof value === 'string') return redactText(value, known);
  if (depth > 3 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = redactData(value[i], known, depth + 1);
    return value;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) record[key] = redactData(record[key], known, depth + 1);
  return record;
}

function redactOwnStrings(error: Error, known: readonly string[]): void {
  for (const [key, desc] of Object.entries(Object.getOwnPropertyDescriptors(error))) {
    if (key === 'cause' || !('value' in desc) || !desc.writable) continue;
    const next = redactData(desc.value, known, 0);
    if (next !== desc.value) (error as unknown as Record<string, unknown>)[key] = next;
  }
}

/**
 * Cuts the known secrets (and credential-shaped text) out of an error and every error in its
 * cause chain, in place: message, stack, and string fields such as serverMessage, requestId
 * or a ValidationError's failures. Returns the same value, so it can be thrown on.
 */
export function redactError<T>(error: T, known: Iterable<string | undefined>): T {
  const secrets = usableSecrets(known);
  const seen = new Set<unknown>();
  for (let e: unknown = error, depth = 0; e instanceof Error && !seen.has(e) && depth < 8; e = e.cause, depth++) {
    seen.add(e);
    redactOwnStrings(e, secrets);
    // The stack quotes the message as it was when the error was made; engines differ on
    // whether it is an own data property, so it is set explicitly.
    if (typeof e.stack === 'string') e.stack = redactText(e.stack, secrets);
    if (typeof e.cause === 'string') e.cause = redactText(e.cause, secrets);
  }
  return error;
}
