// The `ndjson` package against this project's own NDJSON code, side by side in one run: parsing
// account records (readNdjson, which also keeps line numbers, decodes UTF-8 strictly and turns a
// bad line into a reject instead of ending or dropping) and writing export rows (toNdjson).
// The measurement behind not using `ndjson` in src/. speedOfOurs is ndjson's time over ours (above 1:
// ours is faster). Prints one JSON line.
// Run: node --import tsx bench/ndjson.ts [records] [rounds]
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import ndjson from 'ndjson';
import { readNdjson } from '../src/accounts/sources/ndjson.ts';
import { toNdjson } from '../src/exports/ndjson.ts';
import { median } from './stats.ts';

const RECORDS = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 5);

function record(i: number): Record<string, unknown> {
  return {
    status: 1, debtorCompanyId: `C-${i >> 2}`, firstName: 'Aisha', lastName: 'Haddad', language: 'en',
    accountId: `A-${i >> 1}`, subAccountId: `S-${i}`, principal: String(100 + (i % 900)), paidAmount: '30',
    dateDue: '01/02/2026', phones: [{ number: `+9715${String(i).padStart(8, '0')}`, type: 'mobile' }],
    additionalData: { productType: 'BNPL', purpose: 'electronics' },
  };
}

const rows = Array.from({ length: RECORDS }, (_, i) => record(i));
const text = Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
// 64 KiB chunks, as a file stream would deliver them.
const chunks = (): Readable => Readable.from((function* () {
  for (let at = 0; at < text.length; at += 65_536) yield text.subarray(at, at + 65_536);
})(), { objectMode: false });
const sink = (): Writable => new Writable({ objectMode: true, write(_c, _e, cb) { cb(); } });

async function parseOurs(): Promise<number> {
  let n = 0;
  for await (const _ of readNdjson(chunks())) n += 1;
  return n;
}

async function parseTheirs(): Promise<number> {
  let n = 0;
  await pipeline(chunks(), ndjson.parse({ strict: true }), new Writable({ objectMode: true, write(_c, _e, cb) { n += 1; cb(); } }));
  return n;
}

const stringifyOurs = () => pipeline(Readable.from(rows), toNdjson(), sink());
const stringifyTheirs = () => pipeline(Readable.from(rows), ndjson.stringify(), sink());

async function time(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

const ratios = { parse: [] as number[], stringify: [] as number[] };
const ms = { parseOurs: [] as number[], parseTheirs: [] as number[], stringifyOurs: [] as number[], stringifyTheirs: [] as number[] };
if ((await parseOurs()) !== RECORDS || (await parseTheirs()) !== RECORDS) throw new Error('record counts differ');
// Alternates which side goes first, so a drift in the machine's load does not favour one.
async function pair(round: number, ours: () => Promise<unknown>, theirs: () => Promise<unknown>): Promise<{ ours: number; theirs: number }> {
  if (round % 2 === 0) {
    const o = await time(ours);
    return { ours: o, theirs: await time(theirs) };
  }
  const t = await time(theirs);
  return { ours: await time(ours), theirs: t };
}

for (let round = 0; round < ROUNDS; round += 1) {
  const parse = await pair(round, parseOurs, parseTheirs);
  const stringify = await pair(round, stringifyOurs, stringifyTheirs);
  ms.parseOurs.push(parse.ours);
  ms.parseTheirs.push(parse.theirs);
  ms.stringifyOurs.push(stringify.ours);
  ms.stringifyTheirs.push(stringify.theirs);
  ratios.parse.push(parse.theirs / parse.ours);
  ratios.stringify.push(stringify.theirs / stringify.ours);
}
const perSec = (list: number[]) => Math.round(RECORDS / (median(list) / 1000));
console.log(JSON.stringify({
  bench: 'ndjson', records: RECORDS, rounds: ROUNDS, megabytes: +(text.length / 1_048_576).toFixed(1),
  parse: { oursPerSec: perSec(ms.parseOurs), ndjsonPerSec: perSec(ms.parseTheirs), speedOfOurs: +median(ratios.parse).toFixed(2) },
  stringify: { oursPerSec: perSec(ms.stringifyOurs), ndjsonPerSec: perSec(ms.stringifyTheirs), speedOfOurs: +median(ratios.stringify).toFixed(2) },
  node: process.version,
}));
