// JSON text a database takes. JSON.stringify writes a lone surrogate (a text cut inside an emoji)
// as an escape, \ud83d say, which DuckDB's JSON and PostgreSQL's JSONB both refuse: the page, or
// the state saved with it, failed at every run. Surrogates in a pair it writes as they are, so
// every such escape is a lone one: it becomes \ufffd, what both databases store in text for a
// lone surrogate. An escape is one after an odd number of backslashes (an even number is literal
// backslashes followed by the letter u).
const ESCAPED_SURROGATE = /(?<=(?:^|[^\\])(?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/** JSON.stringify(value), with lone surrogates as U+FFFD. */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value);
  return json.includes('\\ud') ? json.replace(ESCAPED_SURROGATE, '\\ufffd') : json;
}
