// What counts as a secret in text the REPL keeps (history) or a notebook saves (outputs).
// Two strengths: history refuses any line that merely looks sensitive, because a refused line
// costs nothing; output scans look only for real secret values, because outputs legitimately
// mention words like "token" (e.g. a 'refresh' event). Cutting secrets out of text that is
// printed anyway is src/core/redact.ts; these only detect, with its credential patterns, so a
// scan finds exactly what redaction would cut.
import { inspect } from 'node:util';
import { BEARER_CREDENTIAL, JWT_LIKE, MIN_SECRET_LENGTH } from '../core/redact.ts';

/**
 * The session's secret values, for filters (they iterate it as strings), shown as [redacted] by
 * util.inspect and JSON: a notebook prints what a cell returns without the REPL's scrub, so a cell
 * ending in `session.knownSecrets()` must not put the password into the saved notebook.
 */
export class SecretValues extends Array<string> {
  static holding(values: readonly string[]): SecretValues {
    const list = new SecretValues();
    list.push(...values);
    return list;
  }

  [inspect.custom](): string {
    return `SecretValues(${this.length}) [redacted]`;
  }

  toJSON(): string[] {
    return Array.from(this, () => '[redacted]');
  }

  override toString(): string {
    return this.toJSON().join(',');
  }
}

// Words that name a secret, and the shapes of keys that announce themselves (Stripe's sk_live_…,
// AWS's AKIA…, a PEM block) or hold one (a URL with a password, postgres://user:pw@host): a line
// with one is kept out of the history.
const SENSITIVE_WORDS = /pass(?:word|wd)|\bpass\b|\bpwd\b|\bpw\s*[:=]|token|secret|bearer|authorization|credential|api[_-]?key|private[_-]?key|access[_-]?key/i;
const KEY_SHAPES = /\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{8,}|\bAKIA[0-9A-Z]{16}\b|-----BEGIN [A-Z ]*PRIVATE KEY-----/;
const URL_WITH_PASSWORD = /[A-Za-z][\w+.-]*:\/\/[^\s/@:'"`]*:[^\s/@'"`]+@/;

function usable(secrets: Iterable<string | undefined>): string[] {
  const out: string[] = [];
  for (const s of secrets) if (typeof s === 'string' && s.length >= MIN_SECRET_LENGTH) out.push(s);
  return out;
}

/** True when a REPL line must not be written to history. */
export function looksSensitive(line: string, knownSecrets: Iterable<string | undefined> = []): boolean {
  if (SENSITIVE_WORDS.test(line) || KEY_SHAPES.test(line) || URL_WITH_PASSWORD.test(line) || JWT_LIKE.test(line)) return true;
  return usable(knownSecrets).some((s) => line.includes(s));
}

/** Secret values (or JWT- or bearer-looking strings) found in text; empty when it is clean. Never
 * returns the value itself, only what kind was found, so the report cannot leak it either. */
export function findLeaks(text: string, knownSecrets: Iterable<string | undefined> = []): string[] {
  const found: string[] = [];
  usable(knownSecrets).forEach((s, i) => {
    if (text.includes(s)) found.push(`known secret #${i + 1}`);
  });
  if (JWT_LIKE.test(text)) found.push('a JWT-looking string');
  if (BEARER_CREDENTIAL.test(text)) found.push('a bearer token');
  return found;
}
