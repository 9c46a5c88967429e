// The public surface is deliberate: docs/api-report.md lists every name the package entries
// export, with its signature, and this test fails when the code and that file disagree. After a
// change meant to alter the public API, `npm run api-report` rewrites the file for review.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { REPORT_PATH, apiReport } from '../../scripts/api-report.ts';

it('docs/api-report.md matches what the package entries export', () => {
  const committed = readFileSync(REPORT_PATH, 'utf8');
  const current = apiReport();
  if (current === committed) return;
  const was = new Set(committed.split('\n'));
  const now = new Set(current.split('\n'));
  const added = [...now].filter((l) => !was.has(l)).slice(0, 20);
  const removed = [...was].filter((l) => !now.has(l)).slice(0, 20);
  assert.fail(`The public API changed; run \`npm run api-report\` and review the diff.\nadded:\n${added.join('\n')}\nremoved:\n${removed.join('\n')}`);
});
