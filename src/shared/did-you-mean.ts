/** Edit distance (insert, delete, substitute, swap two neighbours) between two short names. */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known name a typo most likely meant (`limt` → `limit`), or undefined when none is close: at most one
 * edit for short names, a third of the length for longer ones. Names are config keys, never long input.
 */
export function closestName(typed: string, known: Iterable<string>): string | undefined {
  const word = typed.slice(0, 64).toLowerCase();
  const allowed = Math.max(1, Math.floor(word.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const d = distance(word, name.toLowerCase().slice(0, 64));
    if (d <= allowed && (!best || d < best.distance)) best = { name, distance: d };
  }
  return best?.name;
}

/** `; did you mean "limit"?` or nothing. */
export function didYouMean(typed: string, known: Iterable<string>): string {
  const name = closestName(typed, known);
  return name === undefined ? '' : `; did you mean "${name}"?`;
}
