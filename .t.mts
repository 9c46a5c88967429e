import { readJson } from './src/accounts/sources/json.ts';
const big = '[' + Array.from({length: 200000}, (_, i) => JSON.stringify({status:1, debtorCompanyId:'C'+i, firstName:'A', lastName:'B', language:'en', accountId:'A'+i, subAccountId:'S', principal:'100.50', phones:[{number:'+971500000000'}]})).join(',\n') + ']';
async function* chunks(s: string, n = 65536) { for (let i = 0; i < s.length; i += n) yield Buffer.from(s.slice(i, i + n)); }
let t = performance.now(); let n = 0; for await (const x of readJson(chunks(big))) n++; console.log(n, 'ms', performance.now() - t);
