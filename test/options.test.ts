// parseDuration() and parseInteger(): every form they take, what they refuse, and that a refusal
// is always a ConfigError whose message names the option and shows the value.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Duration } from 'luxon';
import { ConfigError } from '../src/core/errors.ts';
import { parseDuration, parseInteger } from '../src/core/options.ts';

function refusedAs(name: string, value: string): (e: unknown) => boolean {
  return (e: unknown) => e instanceof ConfigError && e.message.startsWith(`${name} must be `) && e.message.endsWith(`, not ${value}`);
}

describe('parseDuration', () => {
  it('takes a number of milliseconds', () => {
    assert.equal(parseDuration(0, 'lookback'), 0);
    assert.equal(parseDuration(1500, 'lookback'), 1500);
    assert.equal(parseDuration(2.6, 'lookback'), 3, 'whole milliseconds');
  });

  it('takes the short forms 500ms, 90s, 2m, 1h, with decimals, and a bare number of ms', () => {
    const cases: [string, number][] = [
      ['500ms', 500], ['90s', 90_000], ['2m', 120_000], ['1h', 3_600_000], ['1.5h', 5_400_000],
      ['0.5s', 500], [' 2m ', 120_000], ['1500', 1500], ['0', 0],
    ];
    for (const [text, ms] of cases) assert.equal(parseDuration(text, 'd'), ms, text);
  });

  it('takes ISO-8601 durations', () => {
    const cases: [string, number][] = [['PT2M', 120_000], ['PT1H30M', 5_400_000], ['P1D', 86_400_000], ['PT0.5S', 500], ['PT0S', 0]];
    for (const [text, ms] of cases) assert.equal(parseDuration(text, 'd'), ms, text);
  });

  it('takes luxon-style objects and luxon Durations', () => {
    assert.equal(parseDuration({ minutes: 2 }, 'd'), 120_000);
    assert.equal(parseDuration({ hours: 1, minutes: 30 }, 'd'), 5_400_000);
    assert.equal(parseDuration({ days: 1 }, 'd'), 86_400_000);
    assert.equal(parseDuration(Duration.fromObject({ seconds: 90 }), 'd'), 90_000);
  });

  it('refuses negatives in every form', () => {
    const cases: [unknown, string][] = [
      [-1, '-1'], ['-5s', "'-5s'"], ['-PT1H', "'-PT1H'"], [{ hours: -1 }, '{"hours":-1}'], [{ hours: 1, minutes: -90 }, '{"hours":1,"minutes":-90}'],
    ];
    for (const [value, shown] of cases) assert.throws(() => parseDuration(value, 'minSplitSpan'), refusedAs('minSplitSpan', shown), shown);
  });

  it('refuses what is not a duration', () => {
    const cases: [unknown, string][] = [
      ['', "''"], ['soon', "'soon'"], ['2d', "'2d'"], ['2 m', "'2 m'"], ['2m30s', "'2m30s'"], ['1e3', "'1e3'"], ['Infinity', "'Infinity'"],
      ['P1X', "'P1X'"], [Number.NaN, 'NaN'], [Number.POSITIVE_INFINITY, 'Infinity'], [null, 'null'], [undefined, 'undefined'],
      [true, 'true'], [[1], '[1]'], [{ fortnights: 1 }, '{"fortnights":1}'], [{ hours: 'x' }, '{"hours":"x"}'],
    ];
    for (const [value, shown] of cases) assert.throws(() => parseDuration(value, 'lookback'), refusedAs('lookback', shown), shown);
  });

  it('refuses what is below min, rounding first, and says so with the option name', () => {
    assert.equal(parseDuration('1ms', '--delivery-timeout', { min: 1 }), 1);
    for (const bad of ['0', '0s', '0.1ms', 'PT0S']) {
      assert.throws(() => parseDuration(bad, '--delivery-timeout', { min: 1 }), (e: unknown) =>
        e instanceof ConfigError && e.message === `--delivery-timeout must be at least 1 ms, not '${bad}'`, bad);
    }
    assert.throws(() => parseDuration('50ms', 'lease', { min: 100 }), (e: unknown) =>
      e instanceof ConfigError && e.message === "lease must be at least 100 ms, not '50ms'");
  });

  it('refuses what is beyond a safe integer of milliseconds', () => {
    assert.throws(() => parseDuration(2 ** 60, 'd'), ConfigError);
    assert.throws(() => parseDuration('9999999999999h', 'd'), ConfigError);
  });
});

describe('parseInteger', () => {
  it('takes whole numbers and their decimal digits, within [min, max]', () => {
    assert.equal(parseInteger(0, 'prefetch'), 0, 'min defaults to 0');
    assert.equal(parseInteger(7, 'limit', { min: 1, max: 1000 }), 7);
    assert.equal(parseInteger('1000', '--limit', { min: 1, max: 1000 }), 1000);
    assert.equal(parseInteger(' 12 ', '--seed'), 12);
    assert.equal(parseInteger(-3, 'offset', { min: -5 }), -3);
    assert.equal(parseInteger('-3', 'offset', { min: -5 }), -3);
    assert.ok(Object.is(parseInteger('-0', 'n'), 0));
  });

  it('refuses non-integers with the option name and the value', () => {
    const cases: [unknown, string][] = [
      [1.5, '1.5'], ['1.5', "'1.5'"], ['1.0', "'1.0'"], ['1e3', "'1e3'"], ['+5', "'+5'"], ['', "''"], ['ten', "'ten'"],
      [Number.NaN, 'NaN'], [Number.POSITIVE_INFINITY, 'Infinity'], [null, 'null'], [undefined, 'undefined'], [{}, '{}'], [[2], '[2]'],
    ];
    for (const [value, shown] of cases) {
      assert.throws(() => parseInteger(value, 'concurrency', { min: 1 }), (e: unknown) =>
        e instanceof ConfigError && e.message === `concurrency must be a whole number of at least 1, not ${shown}`, shown);
    }
  });

  it('refuses negatives and values out of range, naming the range', () => {
    assert.throws(() => parseInteger(-1, 'prefetch'), (e: unknown) =>
      e instanceof ConfigError && e.message === 'prefetch must be a whole number of at least 0, not -1');
    assert.throws(() => parseInteger('-1', '--seed'), (e: unknown) =>
      e instanceof ConfigError && e.message === "--seed must be a whole number of at least 0, not '-1'");
    assert.throws(() => parseInteger('0', '--batch-size', { min: 1, max: 10_000 }), (e: unknown) =>
      e instanceof ConfigError && e.message === "--batch-size must be a whole number from 1 to 10000, not '0'");
    assert.throws(() => parseInteger(10_001, 'batchSize', { min: 1, max: 10_000 }), (e: unknown) =>
      e instanceof ConfigError && e.message === 'batchSize must be a whole number from 1 to 10000, not 10001');
    assert.throws(() => parseInteger('99999999999999999999', 'n'), ConfigError);
  });
});
