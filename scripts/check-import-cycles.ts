/**
 * The import graph's checks, over the graph dependency-cruiser builds (`.dependency-cruiser.cjs`): its
 * rules (policies/ only from the composition root, no bench in the suite, every import resolves…), and
 * no folder-level cycle among the entries of src/ (each folder, each subfolder of src/mcp/, and each
 * top-level file on its own), routes/ and policies/.
 *
 * Every import counts, type-only ones included: a folder that needs another's types cannot be read,
 * moved or replaced without it either, so a cycle through types is a cycle. Text inside comments and
 * strings is no import (the files are parsed).
 *
 * Usage: `npm run check:cycles` (exit 1 on a rule violation or a folder cycle).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ICruiseResult } from 'dependency-cruiser';

/** One import of a file in one folder by a file in another. */
export interface ImportEdge {
  from: string;
  to: string;
  fromFile: string;
  toFile: string;
}

/** folder -> folders it imports from */
export type FolderGraph = ReadonlyMap<string, ReadonlySet<string>>;

/** What the checked tree holds: the folders of the cycle check, and the ones the rules also read. */
export const CHECKED = ['src', 'routes', 'policies'] as const;
const RULES_ALSO_READ = ['test', 'bench', 'scripts'] as const;
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The graph node a file (relative to the root, `/`-separated) belongs to, or undefined for files outside
 * the checked folders. A top-level file of src/ is a node of its own: the composition root (app.ts) and
 * the shared tables every folder reads (errors.ts, types.ts) sit side by side there, and one node for all
 * of them would report every folder as one cycle through that shared name rather than the cycles between
 * folders.
 */
export function folderOf(file: string): string | undefined {
  const rel = file.split('/');
  if (rel[0] === 'routes' || rel[0] === 'policies') return rel[0];
  if (rel[0] !== 'src' || rel.length < 2) return undefined;
  // src/mcp holds three concerns (upstream client, the /mcp endpoint, users' own servers): a node each.
  if (rel[1] === 'mcp' && rel.length > 3) return `src/mcp/${rel[2]}`;
  return `src/${rel[1]}`;
}

export interface Cruised {
  /** Every import between two checked folders (src/*, routes, policies). */
  edges: ImportEdge[];
  /** The rule violations, one line each (`rule: from -> to`). */
  violations: string[];
  /** Files dependency-cruiser read. */
  modules: number;
}

/**
 * Runs dependency-cruiser over `folders` of the project at `root`, with the repository's config. It runs
 * in a plain `node` process: under a loader that rewrites modules (tsx, vitest) its swc parser does not
 * load.
 */
export function cruiseProject(root: string, folders: readonly string[] = [...CHECKED, ...RULES_ALSO_READ]): Cruised {
  const bin = path.resolve(path.dirname(fileURLToPath(import.meta.resolve('dependency-cruiser'))), '../../bin/dependency-cruise.mjs');
  const present = folders.filter((folder) => existsSync(path.join(root, folder)));
  const run = spawnSync(process.execPath, [bin, '--config', path.join(repoRoot, '.dependency-cruiser.cjs'), '--output-type', 'json', ...present], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    timeout: 120_000,
  });
  // It exits with the number of rule violations; the result is on stdout either way.
  if (run.error !== undefined || run.stdout === '') throw new Error(`dependency-cruiser failed: ${run.error?.message ?? run.stderr}`);
  return fromResult(JSON.parse(run.stdout) as ICruiseResult);
}

export function fromResult(result: ICruiseResult): Cruised {
  const edges: ImportEdge[] = [];
  for (const module of result.modules) {
    const from = folderOf(module.source);
    if (from === undefined) continue;
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (to !== undefined && to !== from) edges.push({ from, to, fromFile: module.source, toFile: dependency.resolved });
    }
  }
  const violations = result.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} -> ${violation.to}`);
  return { edges, violations, modules: result.summary.totalCruised };
}

export function folderGraph(edges: readonly ImportEdge[]): FolderGraph {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const targets = graph.get(from) ?? new Set<string>();
    targets.add(to);
    graph.set(from, targets);
  }
  return graph;
}

/**
 * The strongly connected components with more than one folder (Tarjan), each sorted, in sorted order.
 * Self-edges are not cycles: a folder importing its own files is what folders are for.
 */
export function findCycles(graph: FolderGraph): string[][] {
  const nodes = new Set<string>();
  for (const [from, targets] of graph) {
    nodes.add(from);
    for (const to of targets) nodes.add(to);
  }
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  // Recursion depth is bounded by the number of folders (a few dozen).
  const connect = (node: string): void => {
    index.set(node, index.size);
    lowLink.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        lowLink.set(node, Math.min(lowLink.get(node)!, lowLink.get(next)!));
      } else if (onStack.has(next)) {
        lowLink.set(node, Math.min(lowLink.get(node)!, index.get(next)!));
      }
    }
    if (lowLink.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) components.push(component.sort());
  };
  for (const node of [...nodes].sort()) if (!index.has(node)) connect(node);
  return components.sort((a, b) => a.join().localeCompare(b.join()));
}

/** The imports inside one cycle, one line each, so the report says which files to move. */
export function describeCycle(cycle: readonly string[], edges: readonly ImportEdge[]): string {
  const members = new Set(cycle);
  const lines = edges
    .filter((edge) => members.has(edge.from) && members.has(edge.to))
    .map((edge) => `  ${edge.from} -> ${edge.to}: ${edge.fromFile} imports ${edge.toFile}`);
  return [`{${cycle.join(', ')}}`, ...[...new Set(lines)].sort()].join('\n');
}

function main(): void {
  const { edges, violations, modules } = cruiseProject(repoRoot);
  const cycles = findCycles(folderGraph(edges));
  for (const violation of violations) console.error(violation);
  for (const cycle of cycles) console.error(`import cycle:\n${describeCycle(cycle, edges)}`);
  if (violations.length > 0 || cycles.length > 0) process.exitCode = 1;
  else console.log(`${modules} files: no rule violation, no folder-level import cycle (type imports counted)`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
