// A tenant's policy text as Cedar reads it (inline, or its files one after another), with what it takes to
// name a position in it, and the checks made before anything parses it (src/cedar/limits.ts).
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { CedarConfig } from '../config/types.js';
import { MAX_NESTING, MAX_POLICIES, MAX_POLICY_CHARS } from './limits.js';

/** One file's (or the inline text's) part of the whole text. */
interface Segment {
  name: string;
  start: number;
}

export interface PolicyText {
  readonly text: string;
  readonly segments: readonly Segment[];
}

export class PolicyTextError extends Error {}

/** Reads the tenant's policies; `label` names the inline text in positions (`policies:2:13`). */
export async function readPolicyText(config: CedarConfig, baseDir: string, label: string): Promise<PolicyText> {
  if ('policies' in config) return { text: config.policies, segments: [{ name: label, start: 0 }] };
  const segments: Segment[] = [];
  let text = '';
  for (const file of config.files) {
    const path = isAbsolute(file) ? file : resolve(baseDir, file);
    let content: string;
    try {
      content = await readFile(path, 'utf8');
    } catch (error) {
      throw new PolicyTextError(`files: ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    segments.push({ name: file, start: text.length });
    text += `${content}\n`;
    if (text.length > MAX_POLICY_CHARS) break;
  }
  return { text, segments };
}

/** `name:line:column` (1-based) of an offset into the whole text. */
export function positionOf(source: PolicyText, offset: number): string {
  let segment = source.segments[0]!;
  for (const candidate of source.segments) if (candidate.start <= offset) segment = candidate;
  const before = source.text.slice(segment.start, offset);
  const line = before.split('\n').length;
  const column = offset - segment.start - before.lastIndexOf('\n');
  return `${segment.name}:${line}:${column}`;
}

/**
 * Refuses text over the size cap, with more policies than the cap (every policy ends with `;`, so the `;`
 * outside strings and comments bound their number) or nested deeper than the cap. One linear pass: what it
 * lets through is small enough for the worker's parse and, after it, one parse on the event loop.
 */
export function checkBounds(source: PolicyText): string | undefined {
  const { text } = source;
  if (text.length > MAX_POLICY_CHARS) return `the policies are longer than ${MAX_POLICY_CHARS} characters`;
  let depth = 0;
  let statements = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"') {
      for (i += 1; i < text.length && text[i] !== '"'; i += 1) if (text[i] === '\\') i += 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i += 1;
    } else if (c === '(' || c === '[' || c === '{') {
      depth += 1;
      if (depth > MAX_NESTING) return `at ${positionOf(source, i)}: expressions are nested deeper than ${MAX_NESTING} brackets`;
    } else if (c === ')' || c === ']' || c === '}') depth = Math.max(0, depth - 1);
    else if (c === ';' && ++statements > MAX_POLICIES) return `more than ${MAX_POLICIES} policies`;
  }
  return undefined;
}
