// Exact decimal arithmetic on the service's money strings. Amounts arrive as strings precisely so
// that nothing rounds them; floating point would turn "0.1" + "0.2" into "0.30000000000000004".
// A value is scaled to a BigInt by its number of decimals, and results keep the largest scale of
// their operands (as a BigDecimal would), so "100.50" - "30" is "70.50".

/** Plain decimal notation only: optional minus, digits, optional fraction. No exponent, no spaces. */
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/** Longest money string accepted. Far beyond any real amount; it bounds the cost of BigInt parsing
 * of hostile input, which the service leaves open. */
export const MAX_DECIMAL_LENGTH = 64;

interface Scaled {
  readonly units: bigint;
  readonly scale: number;
}

export function isDecimalString(value: string): boolean {
  return value.length <= MAX_DECIMAL_LENGTH && DECIMAL.test(value);
}

function parse(value: string): Scaled {
  if (!isDecimalString(value)) throw new RangeError(`not a decimal string: ${JSON.stringify(value)}`);
  const negative = value.startsWith('-');
  const digits = negative ? value.slice(1) : value;
  const dot = digits.indexOf('.');
  const whole = dot === -1 ? digits : digits.slice(0, dot);
  const fraction = dot === -1 ? '' : digits.slice(dot + 1);
  const units = BigInt(whole + fraction);
  return { units: negative ? -units : units, scale: fraction.length };
}

function rescale(value: Scaled, scale: number): bigint {
  return value.units * 10n ** BigInt(scale - value.scale);
}

function format(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const body = scale === 0 ? whole : `${whole}.${digits.slice(digits.length - scale)}`;
  return negative ? `-${body}` : body;
}

/** a + b, exactly. */
export function addDecimal(a: string, b: string): string {
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  return format(rescale(x, scale) + rescale(y, scale), scale);
}

/** a - b, exactly. */
export function subtractDecimal(a: string, b: string): string {
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  return format(rescale(x, scale) - rescale(y, scale), scale);
}

/** Sum of all values; "0" for none. */
export function sumDecimals(values: Iterable<string>): string {
  let units = 0n;
  let scale = 0;
  for (const value of values) {
    const x = parse(value);
    if (x.scale > scale) {
      units *= 10n ** BigInt(x.scale - scale);
      scale = x.scale;
    }
    units += rescale(x, scale);
  }
  return format(units, scale);
}

/** -1, 0 or 1 as a is below, equal to or above zero. */
export function signOfDecimal(value: string): -1 | 0 | 1 {
  const { units } = parse(value);
  return units < 0n ? -1 : units > 0n ? 1 : 0;
}
