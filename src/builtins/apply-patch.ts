import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { ToolError } from '../execution/tool-error.js';
import { defineTool } from '../registry/define-tool.js';
import type { Tool } from '../types.js';
import { joinText, requiredString, splitText, strictObject } from './args.js';
import type { BuiltinToolDeps } from './context.js';
import { readTextInside, writeTextInside } from './file-io.js';
import { applyHunks, parsePatch } from './patch-parser.js';
import type { Workspace } from './workspace.js';

/** One fully computed change: everything is known (and every path checked) before the first write. */
export interface StagedChange {
  operation: 'add' | 'update' | 'delete';
  /** The path as the patch names it (re-resolved at commit time). */
  input: string;
  realPath: string;
  before: string | undefined;
  after: string | undefined;
  linesAdded: number;
  linesRemoved: number;
  /** Directories an add will create, outermost first, removed again on rollback. */
  createdDirs: string[];
}

export interface PatchFileOps {
  write(ws: Workspace, change: StagedChange, content: string, mode: 'create' | 'overwrite'): Promise<void>;
  remove(ws: Workspace, change: StagedChange): Promise<void>;
}

const defaultOps: PatchFileOps = {
  async write(ws, change, content, mode) {
    await writeTextInside(ws, change.input, content, mode);
  },
  async remove(ws, change) {
    // Re-resolve right before unlinking; unlink never follows the final component.
    await fsp.unlink(await ws.resolveInside(change.input, { write: true }));
  },
};

async function missingDirs(realPath: string): Promise<string[]> {
  const dirs: string[] = [];
  for (let dir = path.dirname(realPath); ; dir = path.dirname(dir)) {
    if (await fsp.lstat(dir).then(() => true, () => false)) break;
    dirs.unshift(dir);
    if (path.dirname(dir) === dir) break;
  }
  return dirs;
}

/** Parses, checks every path and computes every new content. Touches nothing. */
export async function stagePatch(ws: Workspace, patch: string): Promise<StagedChange[]> {
  const staged: StagedChange[] = [];
  const seen = new Set<string>();
  for (const op of parsePatch(patch)) {
    const realPath = await ws.resolveInside(op.path, { write: true });
    if (seen.has(realPath)) throw new ToolError('VALIDATION_ERROR', `the patch touches ${op.path} more than once`);
    seen.add(realPath);
    if (op.kind === 'add') {
      if (await fsp.lstat(realPath).then(() => true, () => false)) throw new ToolError('VALIDATION_ERROR', `cannot add ${op.path}: it already exists`);
      const after = op.lines.length === 0 ? '' : `${op.lines.join('\n')}\n`;
      staged.push({ operation: 'add', input: op.path, realPath, before: undefined, after, linesAdded: op.lines.length, linesRemoved: 0, createdDirs: await missingDirs(realPath) });
      continue;
    }
    const { text } = await readTextInside(ws, op.path);
    if (op.kind === 'delete') {
      staged.push({ operation: 'delete', input: op.path, realPath, before: text, after: undefined, linesAdded: 0, linesRemoved: splitText(text).lines.length, createdDirs: [] });
      continue;
    }
    const split = splitText(text);
    const lines = applyHunks(split.lines, op.hunks, op.path);
    // An empty file that gains lines gets a trailing newline, like every added file.
    const trailingNewline = split.lines.length === 0 ? true : split.trailingNewline;
    const after = joinText({ lines, eol: split.eol, trailingNewline });
    const linesAdded = op.hunks.reduce((sum, h) => sum + h.added, 0);
    const linesRemoved = op.hunks.reduce((sum, h) => sum + h.removed, 0);
    staged.push({ operation: 'update', input: op.path, realPath, before: text, after, linesAdded, linesRemoved, createdDirs: [] });
  }
  return staged;
}

/** Applies staged changes in order; on any failure undoes the ones already applied, newest first. */
export async function commitPatch(ws: Workspace, staged: readonly StagedChange[], ops: PatchFileOps = defaultOps): Promise<void> {
  const applied: StagedChange[] = [];
  try {
    for (const change of staged) {
      if (change.operation === 'delete') await ops.remove(ws, change);
      else await ops.write(ws, change, change.after!, change.operation === 'add' ? 'create' : 'overwrite');
      applied.push(change);
    }
  } catch (error) {
    for (const change of applied.reverse()) {
      try {
        if (change.operation === 'add') {
          await defaultOps.remove(ws, change);
          for (const dir of [...change.createdDirs].reverse()) await fsp.rmdir(dir).catch(() => undefined);
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
        fileChanges: staged.map((c) => ({ path: ws.display(c.realPath), operation: c.operation, linesAdded: c.linesAdded, linesRemoved: c.linesRemoved })),
      };
    },
  });
}
