// bench/results.md holds the latest `npm run bench` run between two markers, and the run-by-run history
// below them, written by hand: a new run replaces only what lies between the markers.
export const LATEST_START = '<!-- latest-run: written by `npm run bench`; everything outside these markers is kept -->';
export const LATEST_END = '<!-- /latest-run -->';

/** `previous` (the file as it is, or undefined when there is none) with its latest run replaced by `latest`. */
export function withLatestRun(previous: string | undefined, latest: string): string {
  const block = `${LATEST_START}\n${latest.trim()}\n${LATEST_END}`;
  if (previous === undefined || previous.trim() === '') return `${block}\n`;
  const start = previous.indexOf(LATEST_START);
  const end = start === -1 ? -1 : previous.indexOf(LATEST_END, start);
  // A file without the markers is kept whole below the new run.
  if (end === -1) return `${block}\n\n${previous.trimStart()}`;
  return `${previous.slice(0, start)}${block}${previous.slice(end + LATEST_END.length)}`;
}
