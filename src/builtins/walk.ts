import type { promises as fsp } from 'node:fs';
import { listDir, openDirAt } from './workspace-fs.js';

export const SKIPPED_DIRS: ReadonlySet<string> = new Set(['.git', 'node_modules']);
/** Deeper folders are skipped (and the walk reported cut short): each level holds one descriptor open. */
const MAX_WALK_DEPTH = 64;

export interface WalkEntry {
  /** Path relative to the walk's start, with `/` separators. */
  relative: string;
  kind: 'file' | 'symlink';
  /** The entry's folder, held open while the entry is being handled (valid only until the next step). */
  dir: fsp.FileHandle;
  name: string;
}

/**
 * Depth-first walk in name order from a held folder. Each sub-folder is opened through its parent's
 * descriptor with O_NOFOLLOW, so a folder swapped for a symlink mid-walk is skipped, never entered; a link
 * is reported, never followed. Skips `.git` and `node_modules`, and stops after `maxEntries` directory
 * entries so a huge tree cannot pin the event loop. `exhausted` tells the caller the walk was cut short.
 */
export async function* walkFiles(start: fsp.FileHandle, maxEntries = 200_000): AsyncGenerator<WalkEntry, { exhausted: boolean }> {
  const budget = { left: maxEntries, cut: false };
  const completed = yield* walkDir(start, '', budget, 0);
  return { exhausted: !completed || budget.cut };
}

// Entries in name order, descending into a folder where it sorts, so results come out in path order.
async function* walkDir(dir: fsp.FileHandle, relativeDir: string, budget: { left: number; cut: boolean }, depth: number): AsyncGenerator<WalkEntry, boolean> {
  let entries;
  try {
    entries = await listDir(dir);
  } catch {
    return true; // Unreadable or vanished folder: skip it, like grep -r.
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    budget.left -= 1;
    if (budget.left < 0) return false;
    const relative = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (SKIPPED_DIRS.has(entry.name)) continue;
      if (depth + 1 >= MAX_WALK_DEPTH) {
        budget.cut = true;
        continue;
      }
      const child = await openDirAt(dir, entry.name).catch(() => undefined);
      if (!child) continue; // Replaced (by a link, a file) or removed since the listing.
      try {
        if (!(yield* walkDir(child, relative, budget, depth + 1))) return false;
      } finally {
        await child.close();
      }
    } else if (entry.isSymbolicLink()) {
      yield { relative, kind: 'symlink', dir, name: entry.name };
    } else if (entry.isFile()) {
      yield { relative, kind: 'file', dir, name: entry.name };
    }
  }
  return true;
}
