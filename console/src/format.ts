/** Durations as people read them: "42 s", "3 min", "2 h 5 min". */
export function duration(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 60_000) return `${Math.round(abs / 1000)} s`;
  if (abs < 3_600_000) return `${Math.round(abs / 60_000)} min`;
  const hours = Math.floor(abs / 3_600_000);
  return `${hours} h ${Math.round((abs - hours * 3_600_000) / 60_000)} min`;
}

/** JSON for display as text (never as HTML: callers put it in a text node). */
export function pretty(value: unknown): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

const TIME_FORMAT = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });

/** A moment in the browser's time zone, the zone named ("2 Dec 2026, 12:05:09 UTC"). */
export const time = (at: string | number): string => TIME_FORMAT.format(new Date(at));

/** The browser's time zone (e.g. "Europe/Oslo"), which every shown time uses. */
export const timeZone = (): string => TIME_FORMAT.resolvedOptions().timeZone;

/** A `datetime-local` input's value (local wall time) as an ISO instant, or undefined when empty/invalid. */
export function localInputToIso(value: string): string | undefined {
  if (value === '') return undefined;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}

/** A call's duration in one style for every row: tenths below 10 ms ("0.4", "0.0"), whole milliseconds above. */
export const milliseconds = (ms: number): string => (ms < 10 ? ms.toFixed(1) : String(Math.round(ms)));

/** "1 error", "4 errors". */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
