// The baseline of bench/cli-start.ts: a plain undici page loop writing the rows of a dataset to
// stdout as NDJSON, as a process of its own (plain JavaScript, no compiler), with the query
// `lender export` sends for a direct dataset (one window from the default origin, ascending).
// Reads LENDER_AUTH_URL, LENDER_SUBDOMAIN, LENDER_EMAIL, LENDER_PASSWORD, LENDER_CA_FILE.
// Run: node bench/plain-page-loop.mjs S2 D07 1000 > rows.ndjson
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';

const [section = 'S2', dataset = 'D07', limit = '1000'] = process.argv.slice(2);
const env = process.env;
const agent = new Agent({ connect: { ca: readFileSync(env.LENDER_CA_FILE) } });
const login = await request(`${env.LENDER_AUTH_URL}/admin/auth/${env.LENDER_SUBDOMAIN}/login`, {
  method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ email: env.LENDER_EMAIL, password: env.LENDER_PASSWORD }),
});
const session = await login.body.json();
let cursor = null;
do {
  const qs = new URLSearchParams({ since: '2015-01-01T00:00:00.000Z', sort: 'asc', limit, ...(cursor !== null && { cursor }) });
  const res = await request(`${env.LENDER_AUTH_URL}/admin/v3/lenders/${session.lenderPublicId}/exports/${section}/${dataset}?${qs}`, {
    dispatcher: agent, headers: { authorization: `Bearer ${session.token}` },
  });
  const { body } = await res.body.json();
  let text = '';
  for (const row of body.rows) text += JSON.stringify(row) + '\n';
  if (!process.stdout.write(text)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  cursor = body.pagination.nextCursor;
} while (cursor !== null);
await agent.close();
