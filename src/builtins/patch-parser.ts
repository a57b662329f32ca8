import { ToolError } from '../call/tool-error.js';

/**
 * Parser for the apply_patch envelope (docs/architecture.md#built-in-tools):
 *
 *   *** Begin Patch
 *   *** Add File: path        every following line starts with `+`
 *   *** Update File: path     hunks start with `@@` (optional anchor text), lines ` ` / `+` / `-`,
 *                             optionally closed by `*** End of File` (hunk must match at the end)
 *   *** Delete File: path
 *   *** End Patch
 *
 * Pure: no filesystem access, so every syntax error is found before anything is touched.
 */
export interface PatchHunk {
  /** Text after `@@` (a line to seek to first), or undefined for a bare `@@` / unified-diff ranges. */
  anchor: string | undefined;
  oldLines: string[];
  newLines: string[];
  endOfFile: boolean;
  /** Counts of `+` and `-` lines, for the tool's summary. */
  added: number;
  removed: number;
}

export type PatchOperation =
  | { kind: 'add'; path: string; lines: string[] }
  | { kind: 'update'; path: string; hunks: PatchHunk[] }
  | { kind: 'delete'; path: string };

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File: ';
const UPDATE = '*** Update File: ';
const DELETE = '*** Delete File: ';
const END_OF_FILE = '*** End of File';
const UNIFIED_RANGE = /^-\d+(,\d+)? \+\d+(,\d+)? @@/;

function syntax(lineNo: number, message: string): ToolError {
  return new ToolError('VALIDATION_ERROR', `invalid patch (line ${lineNo}): ${message}`);
}

export function parsePatch(patch: string): PatchOperation[] {
  const lines = patch.replace(/\r\n/g, '\n').split('\n');
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  if (lines[0]?.trim() !== BEGIN) throw syntax(1, `must start with "${BEGIN}"`);
  if (lines[lines.length - 1]?.trim() !== END) throw syntax(lines.length, `must end with "${END}"`);

  const operations: PatchOperation[] = [];
  let i = 1;
  const last = lines.length - 1;
  const isHeader = (line: string) => line.startsWith('*** ') && line !== END_OF_FILE;
  while (i < last) {
    const line = lines[i]!;
    const lineNo = i + 1;
    if (line.startsWith(ADD)) {
      const path = line.slice(ADD.length).trim();
      if (!path) throw syntax(lineNo, 'missing path');
      const added: string[] = [];
      i += 1;
      while (i < last && !isHeader(lines[i]!)) {
        if (!lines[i]!.startsWith('+')) throw syntax(i + 1, 'every line of an added file must start with "+"');
        added.push(lines[i]!.slice(1));
        i += 1;
      }
      operations.push({ kind: 'add', path, lines: added });
    } else if (line.startsWith(DELETE)) {
      const path = line.slice(DELETE.length).trim();
      if (!path) throw syntax(lineNo, 'missing path');
      operations.push({ kind: 'delete', path });
      i += 1;
    } else if (line.startsWith(UPDATE)) {
      const path = line.slice(UPDATE.length).trim();
      if (!path) throw syntax(lineNo, 'missing path');
      i += 1;
      if (lines[i]?.startsWith('*** Move to: ')) throw syntax(i + 1, '"*** Move to:" is not supported; add and delete instead');
      const hunks: PatchHunk[] = [];
      while (i < last && !isHeader(lines[i]!)) {
        const header = lines[i]!;
        if (!header.startsWith('@@')) throw syntax(i + 1, 'a hunk must start with "@@"');
        const rest = header.slice(2).trim();
        const hunk: PatchHunk = { anchor: rest === '' || UNIFIED_RANGE.test(rest) ? undefined : rest, oldLines: [], newLines: [], endOfFile: false, added: 0, removed: 0 };
        i += 1;
        while (i < last && !lines[i]!.startsWith('@@') && !isHeader(lines[i]!)) {
          const body = lines[i]!;
          if (body === END_OF_FILE) {
            hunk.endOfFile = true;
            i += 1;
            break;
          }
          const marker = body[0];
          const text = body.slice(1);
          if (marker === ' ' || body === '') {
            hunk.oldLines.push(text);
            hunk.newLines.push(text);
          } else if (marker === '-') {
            hunk.oldLines.push(text);
            hunk.removed += 1;
          } else if (marker === '+') {
            hunk.newLines.push(text);
            hunk.added += 1;
          } else throw syntax(i + 1, 'hunk lines must start with " ", "+" or "-"');
          i += 1;
        }
        if (hunk.oldLines.length === 0 && hunk.newLines.length === 0) throw syntax(i, 'empty hunk');
        hunks.push(hunk);
      }
      if (hunks.length === 0) throw syntax(lineNo, `no hunks for ${path}`);
      operations.push({ kind: 'update', path, hunks });
    } else {
      throw syntax(lineNo, `unexpected line "${line.slice(0, 80)}"`);
    }
  }
  if (operations.length === 0) throw syntax(1, 'no file operations');
  return operations;
}

/** Applies hunks to a file's lines (without line endings). Each hunk must match exactly, in order. */
export function applyHunks(original: readonly string[], hunks: readonly PatchHunk[], path: string): string[] {
  const result = [...original];
  let cursor = 0;
  for (const [index, hunk] of hunks.entries()) {
    if (hunk.anchor !== undefined) {
      const at = result.findIndex((line, n) => n >= cursor && line.trim() === hunk.anchor!.trim());
      if (at === -1) throw new ToolError('VALIDATION_ERROR', `hunk ${index + 1} of ${path}: anchor "${hunk.anchor}" not found`);
      cursor = at + 1;
    }
    const at = hunk.oldLines.length === 0 ? (hunk.endOfFile || hunk.anchor === undefined ? result.length : cursor) : findSequence(result, hunk.oldLines, cursor, hunk.endOfFile);
    if (at === -1) throw new ToolError('VALIDATION_ERROR', `hunk ${index + 1} of ${path}: context not found`);
    result.splice(at, hunk.oldLines.length, ...hunk.newLines);
    cursor = at + hunk.newLines.length;
  }
  return result;
}

function findSequence(lines: readonly string[], needle: readonly string[], from: number, atEnd: boolean): number {
  const matchesAt = (start: number) => needle.every((line, j) => lines[start + j] === line);
  if (atEnd) {
    const start = lines.length - needle.length;
    return start >= from && matchesAt(start) ? start : -1;
  }
  for (let start = from; start + needle.length <= lines.length; start += 1) if (matchesAt(start)) return start;
  return -1;
}
