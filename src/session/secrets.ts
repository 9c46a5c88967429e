// What counts as a secret in text the REPL keeps (history) or a notebook saves (outputs).
// Two strengths: history refuses any line that merely looks sensitive, because a refused line
// costs nothing; output scans look only for real secret values, because outputs legitimately
// mention words like "token" (e.g. a 'refresh' event). Cutting secrets out of text that is
// printed anyway is src/client/redact.ts; these only detect.
import { MIN_SECRET_LENGTH } from '../client/redact.ts';

/** JWTs (the service's tokens are JWTs): base64url of '{"' is 'eyJ'. */
const JWT = /eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}/;
/** A bearer credential as a header would carry it; redactText leaves none. */
const BEARER = /Bearer\s+\S{8,}/i;
const SENSITIVE_WORDS = /pass(?:word|wd)|token|secret|bearer|authorization|credential/i;

function usable(secrets: Iterable<string | undefined>): string[] {
  const out: string[] = [];
  for (const s of secrets) if (typeof s === 'string' && s.length >= MIN_SECRET_LENGTH) out.push(s);
  return out;
}

/** True when a REPL line must not be written to history. */
export function looksSensitive(line: string, knownSecrets: Iterable<string | undefined> = []): boolean {
  if (SENSITIVE_WORDS.test(line) || JWT.test(line)) return true;
  return usable(knownSecrets).some((s) => line.includes(s));
}

/** Secret values (or JWT- or bearer-looking strings) found in text; empty when it is clean. Never
 * returns the value itself, only what kind was found, so the report cannot leak it either. */
export function findLeaks(text: string, knownSecrets: Iterable<string | undefined> = []): string[] {
  const found: string[] = [];
  usable(knownSecrets).forEach((s, i) => {
    if (text.includes(s)) found.push(`known secret #${i + 1}`);
  });
  if (JWT.test(text)) found.push('a JWT-looking string');
  if (BEARER.test(text)) found.push('a bearer token');
  return found;
}
