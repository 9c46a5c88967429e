// ISO-8601 UTC text of a timestamp, as Date#toISOString writes it, for the rows the sandbox
// renders: two or three per row, and toISOString was the largest single cost of serving a page.
// The date part is kept per day (a page's rows share few days); the time part is built from
// padded tables.

const DAY_MS = 86_400_000;
/** Date#toISOString writes years 0000 to 9999 with four digits; others take the slow path. */
const FAST_UNTIL = Date.UTC(10_000, 0, 1);
const MAX_DAYS = 4096;

const PAD2 = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const PAD3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
const days = new Map<number, string>();

/** `new Date(ms).toISOString()`, faster. */
export function isoUtc(ms: number): string {
  if (!(ms >= 0 && ms < FAST_UNTIL) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  let date = days.get(day);
  if (date === undefined) {
    if (days.size >= MAX_DAYS) days.clear();
    date = new Date(day * DAY_MS).toISOString().slice(0, 11);
    days.set(day, date);
  }
  let rest = ms - day * DAY_MS;
  const milli = rest % 1000;
  rest = (rest - milli) / 1000;
  const second = rest % 60;
  rest = (rest - second) / 60;
  const minute = rest % 60;
  const hour = (rest - minute) / 60;
  return `${date}${PAD2[hour]}:${PAD2[minute]}:${PAD2[second]}.${PAD3[milli]}Z`;
}
