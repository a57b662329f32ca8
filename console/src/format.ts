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

export const time = (at: string | number): string => new Date(at).toLocaleString();
