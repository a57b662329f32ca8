// Budget periods (docs/governance.md#budgets): calendar days, weeks (from Monday) and months in an IANA time
// zone, found with Intl alone, and rolling windows counted in ROLLING_BUCKETS steps.

export type CalendarPeriod = 'day' | 'week' | 'month';

/** One period: `[start, end)` in epoch ms; `key` names it in counter keys. */
export interface PeriodSpan {
  start: number;
  end: number;
  key: string;
}

/** A rolling window is summed over this many buckets: usage leaves it one bucket (window / 12) at a time. */
export const ROLLING_BUCKETS = 12;

const formats = new Map<string, Intl.DateTimeFormat>();

/** Throws a RangeError for a zone Intl does not know (the config check names the key). */
export function checkTimeZone(timeZone: string): void {
  formatFor(timeZone);
}

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formats.set(timeZone, format);
  }
  return format;
}

/** The wall-clock fields of `at` in `timeZone`. */
function wallClock(at: number, timeZone: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const fields = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatFor(timeZone).formatToParts(at)) {
    if (part.type in fields) fields[part.type as keyof typeof fields] = Number(part.value);
  }
  return fields;
}

/** How far `timeZone`'s wall clock is ahead of UTC at `at`, in ms. */
function offsetAt(at: number, timeZone: string): number {
  const w = wallClock(at, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(at / 1000) * 1000;
}

/** The instant a wall-clock midnight (year, month 1-12, day; day and month may overflow) happens in `timeZone`. */
function midnight(year: number, month: number, day: number, timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day);
  const first = wall - offsetAt(wall, timeZone);
  const second = wall - offsetAt(first, timeZone);
  return second;
}

/** The calendar period holding `at` in `timeZone`. */
export function calendarSpan(at: number, period: CalendarPeriod, timeZone: string): PeriodSpan {
  const { year, month, day } = wallClock(at, timeZone);
  let start: number;
  let end: number;
  if (period === 'day') {
    start = midnight(year, month, day, timeZone);
    end = midnight(year, month, day + 1, timeZone);
  } else if (period === 'week') {
    const sinceMonday = (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7;
    start = midnight(year, month, day - sinceMonday, timeZone);
    end = midnight(year, month, day - sinceMonday + 7, timeZone);
  } else {
    start = midnight(year, month, 1, timeZone);
    end = midnight(year, month + 1, 1, timeZone);
  }
  return { start, end, key: String(start) };
}

/** The bucket of a rolling window holding `at`: usage in it and the ROLLING_BUCKETS - 1 before counts. */
export function rollingBucket(at: number, windowMs: number): { index: number; bucketMs: number } {
  const bucketMs = Math.max(1, Math.floor(windowMs / ROLLING_BUCKETS));
  return { index: Math.floor(at / bucketMs), bucketMs };
}
