import { ToolError } from '../execution/tool-error.js';
import type { Workspace } from './workspace.js';

/** Reads a whole text file through the checked descriptor, refusing directories and files over `maxBytes`. */
export async function readTextInside(ws: Workspace, input: string, maxBytes = ws.limits.maxFileBytes): Promise<{ text: string; realPath: string }> {
  const { handle, realPath } = await ws.openInside(input, {});
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new ToolError('VALIDATION_ERROR', `path is a directory: ${input}`);
    if (!stat.isFile()) throw new ToolError('VALIDATION_ERROR', `not a regular file: ${input}`);
    if (stat.size > maxBytes) throw new ToolError('VALIDATION_ERROR', `file is larger than ${maxBytes} bytes: ${input}`);
    return { text: await handle.readFile({ encoding: 'utf8' }), realPath };
  } finally {
    await handle.close();
  }
}

export type WriteMode = 'create' | 'overwrite' | 'append';

/** Writes through the checked descriptor; truncation happens only after the descriptor passed the check. */
export async function writeTextInside(ws: Workspace, input: string, content: string, mode: WriteMode): Promise<{ realPath: string; created: boolean; bytesWritten: number }> {
  const { handle, realPath, created } = await ws.openInside(input, { write: true, exclusive: mode === 'create', append: mode === 'append' });
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new ToolError('VALIDATION_ERROR', `not a regular file: ${input}`);
    if (mode === 'overwrite') await handle.truncate(0);
    const buffer = Buffer.from(content, 'utf8');
    // A fresh descriptor sits at offset 0 (after the truncate); under O_APPEND the kernel appends.
    await handle.writeFile(buffer);
    return { realPath, created, bytesWritten: buffer.length };
  } finally {
    await handle.close();
  }
}
