import { ToolError } from '../call/tool-error.js';
import { fsError, openForWrite, openRegularAt, readRegular, withLocation } from './workspace-fs.js';
import type { Workspace } from './workspace.js';

/** Reads a whole text file (a regular file of at most `maxBytes`); `path` is as shown to the model. */
export async function readTextInside(ws: Workspace, input: string, maxBytes = ws.limits.maxFileBytes): Promise<{ text: string; path: string }> {
  return withLocation(ws.scope, input, {}, async (location) => {
    const { handle, stat } = await openRegularAt(location.dir, location.name, location.shown);
    try {
      return { text: (await readRegular(handle, stat.size, maxBytes, location.shown)).toString('utf8'), path: location.shown };
    } finally {
      await handle.close();
    }
  });
}

export type WriteMode = 'create' | 'overwrite' | 'append';

export interface Written {
  path: string;
  created: boolean;
  bytesWritten: number;
  /** Folders this write created (outermost first), as parts below the workspace root. */
  createdDirs: string[][];
}

/** Writes a text file, creating missing parents; truncation happens only after the descriptor was checked. */
export async function writeTextInside(ws: Workspace, input: string, content: string, mode: WriteMode): Promise<Written> {
  const createdDirs: string[][] = [];
  return withLocation(ws.scope, input, { write: true, createdDirs }, async (location) => {
    if (location.stat?.isDirectory()) throw new ToolError('VALIDATION_ERROR', `path is a directory: ${location.shown}`);
    const { handle, created } = await openForWrite(location, { exclusive: mode === 'create', append: mode === 'append' });
    try {
      const buffer = Buffer.from(content, 'utf8');
      try {
        if (mode === 'overwrite') await handle.truncate(0);
        // A fresh descriptor sits at offset 0 (after the truncate); under O_APPEND the kernel appends.
        await handle.writeFile(buffer);
      } catch (error) {
        throw fsError(error, location.shown);
      }
      return { path: location.shown, created, bytesWritten: buffer.length, createdDirs };
    } finally {
      await handle.close();
    }
  });
}
