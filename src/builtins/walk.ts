import { promises as fsp } from 'node:fs';
import path from 'node:path';

export const SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);

export interface WalkEntry {
  /** Absolute path. */
  absolute: string;
  /** Path relative to the walk's start, with `/` separators. */
  relative: string;
  kind: 'file' | 'symlink';
}

/**
 * Depth-first walk in name order that never follows symlinks (a link is reported, never entered),
 * skips `.git` and `node_modules`, and stops after `maxEntries` directory entries so a huge tree cannot
 * pin the event loop. `exhausted` tells the caller the walk was cut short.
 */
export async function* walkFiles(start: string, maxEntries = 200_000): AsyncGenerator<WalkEntry, { exhausted: boolean }> {
  const budget = { left: maxEntries };
  const completed = yield* walkDir(start, '', budget);
  return { exhausted: !completed };
}

// Entries in name order, descending into a folder where it sorts, so results come out in path order.
async function* walkDir(start: string, relativeDir: string, budget: { left: number }): AsyncGenerator<WalkEntry, boolean> {
  let entries;
  try {
    entries = await fsp.readdir(path.join(start, relativeDir), { withFileTypes: true });
  } catch {
    return true; // Unreadable or vanished folder: skip it, like grep -r.
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    budget.left -= 1;
    if (budget.left < 0) return false;
    const relative = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !(yield* walkDir(start, relative, budget))) return false;
    } else if (entry.isSymbolicLink()) {
      yield { absolute: path.join(start, relative), relative, kind: 'symlink' };
    } else if (entry.isFile()) {
      yield { absolute: path.join(start, relative), relative, kind: 'file' };
    }
  }
  return true;
}
