import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  addDecimal,
  isDecimalString,
  signOfDecimal,
  subtractDecimal,
  sumDecimals,
} from '../../src/sandbox/accounts/decimal.ts';

describe('decimal arithmetic on money strings', () => {
  it('follows the spec example and keeps the larger scale', () => {
    assert.equal(subtractDecimal('100', '30'), '70');
    assert.equal(subtractDecimal('100', '50'), '50');
    assert.equal(subtractDecimal('100.50', '30'), '70.50');
    assert.equal(subtractDecimal('100.5', '0.25'), '100.25');
    assert.equal(subtractDecimal('30', '100'), '-70');
    assert.equal(subtractDecimal('0.1', '0.3'), '-0.2');
    assert.equal(addDecimal('0.1', '0.2'), '0.3');
    assert.equal(subtractDecimal('5', '5'), '0');
    assert.equal(subtractDecimal('007', '0'), '7');
  });

  it('sums exactly', () => {
    assert.equal(sumDecimals([]), '0');
    assert.equal(sumDecimals(['0.1', '0.2', '0.3']), '0.6');
    assert.equal(sumDecimals(['1', '2.5', '-0.75']), '2.75');
    assert.equal(sumDecimals(['99999999999999999999.99', '0.01']), '100000000000000000000.00');
  });

  it('sign', () => {
    assert.equal(signOfDecimal('0.00'), 0);
    assert.equal(signOfDecimal('-0.01'), -1);
    assert.equal(signOfDecimal('12'), 1);
  });

  it('rejects what is not a plain decimal', () => {
    for (const bad of ['', '1e3', '.5', '5.', '+1', ' 1', 'NaN']) assert.equal(isDecimalString(bad), false, bad);
    assert.throws(() => subtractDecimal('x', '1'), RangeError);
  });

  it('agrees with integer arithmetic on cents (property)', () => {
    const cents = fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n });
    const asMoney = (c: bigint): string => {
      const abs = c < 0n ? -c : c;
      return `${c < 0n ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
    };
    fc.assert(fc.property(cents, cents, (a, b) => {
      assert.equal(subtractDecimal(asMoney(a), asMoney(b)), asMoney(a - b));
      assert.equal(addDecimal(asMoney(a), asMoney(b)), asMoney(a + b));
    }));
  });
});
