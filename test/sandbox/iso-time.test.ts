// The sandbox's ISO formatter writes exactly what Date#toISOString writes, for every timestamp.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isoUtc } from '../../src/sandbox/exports/iso-time.ts';

const MAX_DATE_MS = 8.64e15;

test('isoUtc equals toISOString for any valid timestamp, fast path and slow', () => {
  fc.assert(fc.property(fc.integer({ min: -MAX_DATE_MS, max: MAX_DATE_MS }), (ms) => {
    assert.equal(isoUtc(ms), new Date(ms).toISOString());
  }), { numRuns: 20_000 });
  // Years the service's data lives in, densely: the day cache and its clearing included.
  fc.assert(fc.property(fc.integer({ min: Date.UTC(2014, 0, 1), max: Date.UTC(2040, 0, 1) }), (ms) => {
    assert.equal(isoUtc(ms), new Date(ms).toISOString());
  }), { numRuns: 20_000 });
});

test('isoUtc at the edges: day and year boundaries, the epoch, year 9999 and 10000, fractions', () => {
  const edges = [0, 1, 999, 86_399_999, 86_400_000, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2025, 0, 1),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10_000, 0, 1), -1, 1.5, Date.UTC(2025, 5, 1) + 0.25];
  for (const ms of edges) assert.equal(isoUtc(ms), new Date(ms).toISOString(), String(ms));
  assert.throws(() => isoUtc(Number.NaN), RangeError);
});
