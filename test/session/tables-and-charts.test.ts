// What table() and chart() draw: the HTML table a notebook shows (every cell escaped), the chart
// forms and the Vega-Lite specs they become, the SVG vega renders from them (the same bytes for
// the same chart, ids that two charts on a page never share, markup in labels escaped), their
// text forms, and vega loaded only when a chart is rendered.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { chartModel, chartSpec, chartSvg, showChart, textChart, type ChartModel, type VegaLiteSpec } from '../../src/session/chart.ts';
import { escapeHtml, htmlTable } from '../../src/session/html.ts';
import { tableCells } from '../../src/session/table.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/** The text of the cells of an HTML table, unescaped, row by row (the heading first). */
function cellsOf(html: string): string[][] {
  const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
  return [...html.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((c) => unescape(c[1]!)));
}

describe('HTML tables', () => {
  it('escape every cell and heading: any text shows as itself and opens no element', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary', minLength: 1 }), (value, field) => {
      const html = htmlTable([{ [field]: value, n: 1 }], undefined, { maxWidth: Infinity });
      // The only tags are the table's own.
      for (const tag of html.match(/<[^>]*>/g) ?? []) assert.match(tag, /^<\/?(table|thead|tbody|tr|th|td)( style="text-align:right")?>$/);
      const flat = (s: string) => s.replace(/\s+/g, ' ');
      assert.deepEqual(cellsOf(html), [[flat(field), 'n'].slice(0, field === 'n' ? 1 : 2), field === 'n' ? ['1'] : [flat(value), '1']]);
    }), { numRuns: 300 });
    assert.equal(escapeHtml(`<img src=x onerror="alert('1')">&`), '&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;');
  });

  it('hold the cells of the text table: same cuts, numbers to the right, the rows left out said', () => {
    const rows = Array.from({ length: 7 }, (_, i) => ({ id: `row-${i}-${'x'.repeat(50)}`, amount: i * 10, note: i % 2 === 0 ? null : { k: i } }));
    const html = htmlTable(rows, ['id', 'amount', 'note'], { maxRows: 5 });
    const text = tableCells(rows, ['id', 'amount', 'note'], { maxRows: 5 });
    assert.deepEqual(cellsOf(html), [text.columns, ...text.rows]);
    assert.equal(text.rows[0]![0], `row-0-${'x'.repeat(29)}…`);   // 36 characters
    assert.deepEqual(text.rows.map((r) => r[2]), ['', '{"k":1}', '', '{"k":3}', '']);
    assert.match(html, /<th style="text-align:right">amount<\/th>/);
    assert.match(html, /<p>… 2 more rows<\/p>$/);
    assert.equal(htmlTable([]), '<p>(no rows)</p>');
  });
});

describe('chart forms', () => {
  it('label → value, as an object or pairs: horizontal bars in the given order', () => {
    for (const data of [{ SUCCESS: 10, FAILED: 2 }, [['SUCCESS', 10], ['FAILED', 2]] as [string, number][]]) {
      const model = chartModel(data);
      assert.deepEqual(model, { kind: 'series', mark: 'bar', points: [{ x: 'SUCCESS', y: 10 }, { x: 'FAILED', y: 2 }], names: { x: 'label', y: 'value' }, horizontal: true, textWidth: 40 });
      const spec = chartSpec(model) as { encoding: { y: { field: string; sort: null } }; data: { values: unknown[] } };
      assert.equal(spec.encoding.y.field, 'x');
      assert.equal(spec.encoding.y.sort, null);
    }
  });

  it('rows summed per x and color, in first-seen order; rows without y are counted; bigint from SQL is a number', () => {
    const rows = [
      { month: '2026-01', status: 'OK', n: 2n }, { month: '2026-01', status: 'FAILED', n: 1 },
      { month: '2026-02', status: 'OK', n: 3 }, { month: '2026-01', status: 'OK', n: 5 }, { month: '2026-02', status: 'OK', n: null },
    ];
    const stacked = chartModel(rows, { x: 'month', y: 'n', color: 'status' });
    assert.ok(stacked.kind === 'series');
    assert.deepEqual(stacked.points, [{ x: '2026-01', c: 'OK', y: 7 }, { x: '2026-01', c: 'FAILED', y: 1 }, { x: '2026-02', c: 'OK', y: 3 }]);
    const counted = chartModel(rows, { x: 'status', mark: 'line' });
    assert.ok(counted.kind === 'series');
    assert.deepEqual(counted.points, [{ x: 'OK', y: 4 }, { x: 'FAILED', y: 1 }]);
    const spec = chartSpec(counted) as { mark: { type: string } };
    assert.equal(spec.mark.type, 'line');
  });

  it('a Vega-Lite spec is taken as it is', () => {
    const spec = { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', data: { values: [{ a: 1 }] }, mark: 'point', encoding: {} };
    const model = chartModel(spec);
    assert.equal(chartSpec(model), spec);
    assert.match(textChart(model).text, /^Vega-Lite chart \(point, 1 data values\); drawn as SVG in a notebook\na\n─\n1$/);
  });

  it('refuses what it cannot draw, saying what it takes', () => {
    const usage = /chart\(\) takes \{ label: number \}, \[label, number\] pairs, rows with \{ x, y, color \} options, or a Vega-Lite spec/;
    assert.throws(() => chartModel({ a: 'x' } as never), usage);
    assert.throws(() => chartModel([{ a: 1 }]), /rows need at least \{ x: 'a field' \}/);
    assert.throws(() => chartModel([{ a: 1, b: 'x' }], { x: 'a', y: 'b' }), /the field 'b' of row 1 is not a finite number/);
    assert.throws(() => chartModel({ a: Number.NaN }), /the value of 'a' is not a finite number/);
    assert.throws(() => chartModel({ a: 1 }, { mark: 'pie' as never }), /mark must be 'bar' or 'line'/);
  });

  it('text forms: bars scaled to the width; with a color, a column per color and a bar of the total', () => {
    assert.equal(textChart(chartModel({ a: 1, b: 4 }, { textWidth: 8 })).text, 'label  value  bar\n─────  ─────  ────────\na          1  ██\nb          4  ████████');
    const stacked = textChart(chartModel([{ m: 'x', s: 'A', n: 1 }, { m: 'x', s: 'B', n: 3 }, { m: 'y', s: 'B', n: 2 }], { x: 'm', y: 'n', color: 's', textWidth: 4, title: 'T' }));
    assert.equal(stacked.text, 'T\nm  A  B  total  bar\n─  ─  ─  ─────  ────\nx  1  3      4  ████\ny  0  2      2  ██');
  });
});

describe('SVG charts', () => {
  const stacked: ChartModel = chartModel(
    Array.from({ length: 36 }, (_, i) => ({ month: `2025-${String(1 + (i % 12)).padStart(2, '0')}`, status: ['SUCCESS', 'PENDING', 'FAILED'][Math.floor(i / 12)]!, n: (i * 7) % 23 })),
    { x: 'month', y: 'n', color: 'status', title: 'Payments' },
  );

  it('the same chart gives the same bytes, a reasonably small document with its labels', async () => {
    const spec = chartSpec(stacked);
    const first = await chartSvg(spec);
    const again = await chartSvg(spec);
    assert.equal(first, again);
    assert.match(first, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]* width="\d+" height="\d+"/);
    assert.ok(first.length < 40_000, `${first.length} bytes`);
    for (const label of ['Payments', '2025-01', '2025-12', 'SUCCESS', 'FAILED', 'status', 'month']) assert.ok(first.includes(`>${label}</text>`), label);
  });

  it('an empty chart is drawn empty, without vega\'s warnings about axes with no extent', async () => {
    const warnings: unknown[] = [];
    const original = console.warn;
    console.warn = (...args: unknown[]) => void warnings.push(args);
    try {
      for (const svg of [await chartSvg({}), await chartSvg([], { x: 'month', y: 'n' })]) assert.match(svg, /^<svg /);
    } finally {
      console.warn = original;
    }
    assert.deepEqual(warnings, []);
  });

  it('escapes markup in labels and titles', async () => {
    const svg = await chartSvg({ '<script>alert(1)</script>': 3, 'a & b': 1 }, { title: '<b>t</b>' });
    assert.ok(!svg.includes('<script>') && !svg.includes('<b>'));
    assert.ok(svg.includes('&lt;script&gt;alert(1)&lt;/script&gt;') && svg.includes('a &amp; b'));
  });

  it('ids (clip paths) are per chart: two charts on one page never share one', async () => {
    const clipped = (title: string) => ({ title, data: { values: [{ a: 'x', b: 1 }] }, mark: { type: 'bar', clip: true }, encoding: { x: { field: 'a', type: 'nominal' }, y: { field: 'b', type: 'quantitative' } } });
    const ids = async (spec: VegaLiteSpec) => [...(await chartSvg(spec)).matchAll(/id="([^"]+)"/g)].map((m) => m[1]!);
    const one = await ids(clipped('one'));
    const two = await ids(clipped('two'));
    assert.ok(one.length > 0, 'a clipped mark has a clip path');
    assert.deepEqual(one.filter((id) => two.includes(id)), []);
    assert.deepEqual(await ids(clipped('one')), one);
  });

  it('in a notebook a chart that cannot be drawn shows its error in the cell, and never rejects unheard', async () => {
    const shown: { html: string[]; svg: string[] } = { html: [], svg: [] };
    const display = { html: (m: string) => shown.html.push(m), svg: (m: string) => shown.svg.push(m) };
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      // Not awaited, as a notebook cell may leave it: the failure must still show, and only there.
      void showChart(display, chartModel({ mark: 'no-such-mark' }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await showChart(display, chartModel({ a: 1, '<b>': 2 }));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    assert.deepEqual(unhandled, []);
    assert.equal(shown.html.length, 1);
    assert.match(shown.html[0]!, /^<pre>chart\(\): Vega-Lite refused the spec: .*<\/pre>$/s);
    assert.equal(shown.svg.length, 1);
    assert.ok(shown.svg[0]!.startsWith('<svg') && shown.svg[0]!.includes('&lt;b&gt;'));
  });

  it('data by URL: a local file or HTTPS, never plain HTTP; data that cannot be loaded fails the chart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lender-chart-data-'));
    try {
      const file = join(dir, 'rows.json');
      writeFileSync(file, JSON.stringify([{ status: 'OK' }, { status: 'OK' }, { status: 'FAILED' }]));
      const spec = (url: string) => ({ data: { url }, mark: 'bar', encoding: { x: { field: 'status', type: 'nominal' }, y: { aggregate: 'count', type: 'quantitative' } } });
      const svg = await chartSvg(spec(file));
      assert.ok(svg.includes('>FAILED</text>') && svg.includes('>OK</text>'));
      await assert.rejects(chartSvg(spec('http://127.0.0.1:9/rows.json')), { name: 'ConfigError', message: 'chart(): data is loaded over HTTPS only, not from http:' });
      await assert.rejects(chartSvg(spec(join(dir, 'missing.json'))), { name: 'ConfigError', message: /^chart\(\): vega could not draw the chart: ENOENT/ });
      await assert.rejects(chartSvg({ mark: 'no-such-mark' }), { name: 'ConfigError', message: /^chart\(\): Vega-Lite refused the spec: / });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('renders charts asked for at once, each whole', async () => {
    const specs = ['a', 'b', 'c', 'd'].map((t) => chartSpec(chartModel({ [t]: 1, z: 2 }, { title: t })));
    const together = await Promise.all(specs.map((s) => chartSvg(s)));
    for (const [i, s] of specs.entries()) assert.equal(together[i], await chartSvg(s));
  });
});

describe('loading', () => {
  // Module resolutions seen by an ESM hook in a child process: vega is ESM, so the CommonJS
  // cache would not show it.
  function vegaLoadedBy(what: string): string[] {
    const hooks = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (/\\/node_modules\\/vega/.test(r.url)) port.postMessage(r.url);
  return r;
}`;
    const script = `import { register } from 'node:module';
      import { MessageChannel } from 'node:worker_threads';
      const { port1, port2 } = new MessageChannel();
      const seen = [];
      port1.on('message', (m) => seen.push(String(m)));
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), { data: { port: port2 }, transferList: [port2] });
      ${what}
      await new Promise((r) => setTimeout(r, 200));
      port1.close();
      process.stdout.write(JSON.stringify(seen));`;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    return JSON.parse(result.stdout) as string[];
  }

  it('the library, the session, the REPL and a text chart load no vega; an SVG chart does', () => {
    assert.deepEqual(vegaLoadedBy(`await import('./src/index.ts'); await import('./repl/start.ts');
      const { openSession } = await import('./src/session.ts');
      const { chartModel, textChart } = await import('./src/session/chart.ts'); textChart(chartModel({ a: 1 }));`), []);
    const drawn = vegaLoadedBy(`const { chartSvg } = await import('./src/session.ts'); await chartSvg({ a: 1 });`);
    assert.ok(drawn.some((url) => url.includes('/node_modules/vega/')) && drawn.some((url) => url.includes('/node_modules/vega-lite/')), JSON.stringify(drawn.slice(0, 5)));
  });
});
