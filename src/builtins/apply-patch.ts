import { ToolError } from '../call/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool } from '../call/types.js';
import { joinText, requiredString, splitText, strictObject } from './args.js';
import type { BuiltinToolDeps } from './context.js';
import { readTextInside, writeTextInside } from './file-io.js';
import { applyHunks, parsePatch } from './patch-parser.js';
import type { Workspace } from './workspace.js';
import { NotFoundError, rmdirAt, unlinkAt, withLocation } from './workspace-fs.js';

/** One fully computed change: everything is known (and every path checked) before the first write. */
export interface StagedChange {
  operation: 'add' | 'update' | 'delete';
  /** The path as the patch names it (resolved again, through held folders, at commit time). */
  input: string;
  /** The resolved path as shown to the model. */
  path: string;
  before: string | undefined;
  after: string | undefined;
  linesAdded: number;
  linesRemoved: number;
}

export interface PatchFileOps {
  /** Writes one change; answers the folders it created (parts below the workspace root), for rollback. */
  write(ws: Workspace, change: StagedChange, content: string, mode: 'create' | 'overwrite'): Promise<string[][]>;
  remove(ws: Workspace, change: StagedChange): Promise<void>;
}

const defaultOps: PatchFileOps = {
  async write(ws, change, content, mode) {
    return (await writeTextInside(ws, change.input, content, mode)).createdDirs;
  },
  async remove(ws, change) {
    await withLocation(ws.scope, change.input, { write: true }, unlinkAt);
  },
};

/** Parses, checks every path and computes every new content. Touches nothing. */
export async function stagePatch(ws: Workspace, patch: string): Promise<StagedChange[]> {
  const staged: StagedChange[] = [];
  const seen = new Set<string>();
  for (const op of parsePatch(patch)) {
    // Resolved as a write: a path outside, in a read-only root or in .git/hooks fails here, before any change.
    const { shown, exists } = await withLocation(ws.scope, op.path, { write: true }, async (location) => ({ shown: location.shown, exists: location.stat !== undefined })).catch(
      // A missing parent folder: nothing there yet, which only an add may want.
      (error: unknown) => (op.kind === 'add' && error instanceof NotFoundError ? { shown: error.path, exists: false } : Promise.reject(error)),
    );
    if (seen.has(shown)) throw new ToolError('VALIDATION_ERROR', `the patch touches ${shown} more than once`);
    seen.add(shown);
    if (op.kind === 'add') {
      if (exists) throw new ToolError('VALIDATION_ERROR', `cannot add ${shown}: it already exists`);
      const after = op.lines.length === 0 ? '' : `${op.lines.join('\n')}\n`;
      staged.push({ operation: 'add', input: op.path, path: shown, before: undefined, after, linesAdded: op.lines.length, linesRemoved: 0 });
      continue;
    }
    const { text } = await readTextInside(ws, op.path);
    if (op.kind === 'delete') {
      staged.push({ operation: 'delete', input: op.path, path: shown, before: text, after: undefined, linesAdded: 0, linesRemoved: splitText(text).lines.length });
      continue;
    }
    const split = splitText(text);
    const lines = applyHunks(split.lines, op.hunks, op.path);
    // An empty file that gains lines gets a trailing newline, like every added file.
    const trailingNewline = split.lines.length === 0 ? true : split.trailingNewline;
    const after = joinText({ lines, eol: split.eol, trailingNewline });
    const linesAdded = op.hunks.reduce((sum, h) => sum + h.added, 0);
    const linesRemoved = op.hunks.reduce((sum, h) => sum + h.removed, 0);
    staged.push({ operation: 'update', input: op.path, path: shown, before: text, after, linesAdded, linesRemoved });
  }
  return staged;
}

/** Applies staged changes in order; on any failure undoes the ones already applied, newest first. */
export async function commitPatch(ws: Workspace, staged: readonly StagedChange[], ops: PatchFileOps = defaultOps): Promise<void> {
  const applied: { change: StagedChange; createdDirs: string[][] }[] = [];
  try {
    for (const change of staged) {
      let createdDirs: string[][] = [];
      if (change.operation === 'delete') await ops.remove(ws, change);
      else createdDirs = await ops.write(ws, change, change.after!, change.operation === 'add' ? 'create' : 'overwrite');
      applied.push({ change, createdDirs });
    }
  } catch (error) {
    for (const { change, createdDirs } of applied.reverse()) {
      try {
        if (change.operation === 'add') {
          await defaultOps.remove(ws, change);
          for (const dir of [...createdDirs].reverse()) {
            await withLocation(ws.scope, dir.join('/'), { write: true }, rmdirAt).catch(() => undefined);
          }
        } else {
          await defaultOps.write(ws, change, change.before!, change.operation === 'delete' ? 'create' : 'overwrite');
        }
      } catch {
        // Keep undoing the rest; the original error is what the caller needs to see.
      }
    }
    throw error;
  }
}

export function createApplyPatchTool(deps: BuiltinToolDeps): Tool {
  return defineTool({
    name: 'apply_patch',
    source: 'builtin',
    description:
      'Apply a patch to workspace files, all or nothing. Envelope "*** Begin Patch" … "*** End Patch"; operations "*** Add File: p" (lines start with +), ' +
      '"*** Update File: p" (hunks start with @@, lines " "/"+"/"-", anchored by exact context), "*** Delete File: p".',
    inputSchema: strictObject({ patch: { type: 'string', minLength: 1, description: 'The patch text' } }, ['patch']),
    destructive: true,
    checkStructure: (args) => (typeof args.patch === 'string' && args.patch.trim().length > 0 ? undefined : 'apply_patch requires a non-empty patch'),
    handler: async (args, ctx) => {
      const ws = await deps.workspaceFor(ctx.principal);
      const staged = await stagePatch(ws, requiredString(args, 'patch', 'apply_patch'));
      await commitPatch(ws, staged);
      return {
        filesChanged: staged.length,
        fileChanges: staged.map((c) => ({ path: c.path, operation: c.operation, linesAdded: c.linesAdded, linesRemoved: c.linesRemoved })),
      };
    },
  });
}
