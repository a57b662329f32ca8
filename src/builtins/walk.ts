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
  let visited = 0;
  const stack: string[] = [''];
  while (stack.length > 0) {
    const relativeDir = stack.pop()!;
    let entries;
    try {
      entries = await fsp.readdir(path.join(start, relativeDir), { withFileTypes: true });
    } catch {
      continue; // Unreadable or vanished directory: skip, like grep -r.
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: string[] = [];
    for (const entry of entries) {
      visited += 1;
      if (visited > maxEntries) return { exhausted: true };
      const relative = relativeDir ? `${relativeDir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) subdirs.push(relative);
      } else if (entry.isSymbolicLink()) {
        yield { absolute: path.join(start, relative), relative, kind: 'symlink' };
      } else if (entry.isFile()) {
        yield { absolute: path.join(start, relative), relative, kind: 'file' };
      }
    }
    for (const dir of subdirs.reverse()) stack.push(dir);
  }
  return { exhausted: false };
}
