// The published manifest runs no script on install. A checkout builds dist/ on `npm ci` through
// its `prepare` script; `npm pack` takes that script out of package.json for the tarball and
// puts the file back afterwards (prepack: strip, postpack: restore).
//   node scripts/pack-manifest.mjs strip|restore
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

const MANIFEST = new URL('../package.json', import.meta.url);
const KEPT = new URL('../package.json.unpacked', import.meta.url);

const command = process.argv[2];
if (command === 'strip') {
  const text = readFileSync(MANIFEST, 'utf8');
  writeFileSync(KEPT, text);
  const manifest = JSON.parse(text);
  delete manifest.scripts.prepare;
  writeFileSync(MANIFEST, JSON.stringify(manifest, null, 2) + '\n');
} else if (command === 'restore') {
  if (existsSync(KEPT)) renameSync(KEPT, MANIFEST);
} else {
  process.stderr.write('usage: node scripts/pack-manifest.mjs strip|restore\n');
  process.exit(2);
}
