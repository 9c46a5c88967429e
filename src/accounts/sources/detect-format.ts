// Which reader a source needs, told from its first bytes. `[` is a JSON array; `{"accounts": [` is
// the endpoint's own body shape; any other `{` starts an NDJSON line, since no record's first key
// is `accounts`. Pure; the caller feeds more text while the answer is undefined.

/** A record source format: NDJSON (one record per line) or one JSON document. */
export type SourceFormat = 'ndjson' | 'json';

const WRAPPER_HEAD = /^\{\s*"accounts"\s*:\s*(\S)/;
const FIRST_KEY = /^\{\s*("(?:[^"\\]|\\.)*"|[^\s"])/;

/** undefined when `head` is too short to tell and more input may follow (`ended` false). */
export function detectFormat(head: string, ended: boolean): SourceFormat | undefined {
  const text = head.replace(/^\uFEFF/, '').trimStart();
  if (text === '') return ended ? 'ndjson' : undefined;
  if (text[0] === '[') return 'json';
  if (text[0] !== '{') return 'ndjson';
  const wrapper = WRAPPER_HEAD.exec(text);
  if (wrapper !== null) return wrapper[1] === '[' ? 'json' : 'ndjson';
  const key = FIRST_KEY.exec(text);
  if (key !== null && key[1] !== '"accounts"') return 'ndjson';
  return ended ? 'ndjson' : undefined;
}
