/**
 * Folder-level import cycles among the entries of src/ (each folder, each subfolder of src/mcp/, and each
 * top-level file on its own), routes/ and policies/.
 *
 * Only value imports count: a cycle of runtime imports means no folder can be loaded, tested or
 * replaced without the others, while a type-only import disappears at compile time. Skipped:
 * `import type`, imports whose every name is `type X`, `export type … from`, `import("…")` in type
 * positions. Counted: every other import or re-export (side-effect imports included) and dynamic
 * `import()` calls.
 *
 * The files are read with the TypeScript compiler's own parser (the `typescript` devDependency, pinned,
 * through its API module), so text inside comments and strings cannot pass for an import.
 *
 * Usage: `npm run check:cycles` (exit 1 on a cycle not in KNOWN_CYCLES or on a stale entry there).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { API } from 'typescript/unstable/sync';
import { SyntaxKind, type Node, type SourceFile } from 'typescript/unstable/ast';
import {
  isCallExpression,
  isExportDeclaration,
  isExternalModuleReference,
  isImportDeclaration,
  isImportEqualsDeclaration,
  isNamedExports,
  isNamedImports,
  isStringLiteral,
} from 'typescript/unstable/ast/is';

/** One import of a file in one folder by a file in another. */
export interface ImportEdge {
  from: string;
  to: string;
  fromFile: string;
  toFile: string;
}

/** folder -> folders it imports values from */
export type FolderGraph = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * Cycles that exist today and are being removed by work in flight. Each entry is a sorted folder list
 * with the reason; the check fails when a listed cycle no longer occurs, so the entry goes with the fix.
 */
export const KNOWN_CYCLES: ReadonlyArray<{ folders: readonly string[]; why: string }> = [];

/**
 * The graph node a file belongs to, or undefined for files outside the checked folders. A top-level file
 * of src/ is a node of its own: the composition root (app.ts, gateway.ts) and the shared tables every
 * folder reads (errors.ts, types.ts) sit side by side there, and one node for all of them would report
 * every folder as one cycle through that shared name rather than the cycles between folders.
 */
export function folderOf(root: string, file: string): string | undefined {
  const rel = path.relative(root, file).split(path.sep);
  if (rel[0] === 'routes' || rel[0] === 'policies') return rel[0];
  if (rel[0] !== 'src' || rel.length < 2) return undefined;
  // src/mcp holds three concerns (upstream client, the /mcp endpoint, users' own servers): a node each.
  if (rel[1] === 'mcp' && rel.length > 3) return `src/mcp/${rel[2]}`;
  return `src/${rel[1]}`;
}

/** The module specifiers a file imports values from (see the header for what counts). */
export function valueImports(sourceFile: SourceFile): string[] {
  const specifiers: string[] = [];
  const visit = (node: Node): void => {
    if (isImportDeclaration(node)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.phaseModifier === SyntaxKind.TypeKeyword ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      if (!typeOnly && isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
      return;
    }
    if (isExportDeclaration(node)) {
      const clause = node.exportClause;
      const typeOnly =
        node.isTypeOnly ||
        (clause !== undefined &&
          isNamedExports(clause) &&
          clause.elements.length > 0 &&
          clause.elements.every((element) => element.isTypeOnly));
      if (!typeOnly && node.moduleSpecifier !== undefined && isStringLiteral(node.moduleSpecifier)) {
        specifiers.push(node.moduleSpecifier.text);
      }
      return;
    }
    if (isImportEqualsDeclaration(node)) {
      const reference = node.moduleReference;
      if (!node.isTypeOnly && isExternalModuleReference(reference) && isStringLiteral(reference.expression)) {
        specifiers.push(reference.expression.text);
      }
      return;
    }
    if (isCallExpression(node) && node.expression.kind === SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && isStringLiteral(argument)) specifiers.push(argument.text);
    }
    node.forEachChild(visit);
  };
  sourceFile.forEachChild(visit);
  return specifiers;
}

/** Resolves a relative specifier the way NodeNext does for this repository's `.js` suffixes. */
function resolveRelative(fromFile: string, specifier: string, known: ReadonlySet<string>): string | undefined {
  const base = path.resolve(path.dirname(fromFile), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, path.join(base, 'index.ts')];
  return candidates.find((candidate) => known.has(candidate));
}

/** Every cross-folder value import among the checked folders of the project at `root`. */
export function collectImportEdges(root: string, tsconfig = path.join(root, 'tsconfig.json')): ImportEdge[] {
  const api = new API({ cwd: root });
  try {
    const snapshot = api.updateSnapshot({ openProjects: [tsconfig] });
    const project = snapshot.getProject(tsconfig);
    if (project === undefined) throw new Error(`TypeScript did not open ${tsconfig}`);
    const files = project.program
      .getSourceFileNames()
      .map((name) => path.resolve(name))
      .filter((name) => folderOf(root, name) !== undefined);
    const known = new Set(files);
    const edges: ImportEdge[] = [];
    for (const file of files) {
      const sourceFile = project.program.getSourceFile(file);
      if (sourceFile === undefined) throw new Error(`TypeScript has no source for ${file}`);
      const from = folderOf(root, file);
      for (const specifier of valueImports(sourceFile)) {
        if (!specifier.startsWith('.')) continue;
        const target = resolveRelative(file, specifier, known);
        const to = target === undefined ? undefined : folderOf(root, target);
        // Relative imports that leave the checked folders (none today) are not part of the graph.
        if (target === undefined || to === undefined) {
          if (folderOf(root, path.resolve(path.dirname(file), specifier)) !== undefined) {
            throw new Error(`${path.relative(root, file)}: cannot resolve ${specifier}`);
          }
          continue;
        }
        if (from !== undefined && from !== to) {
          edges.push({ from, to, fromFile: path.relative(root, file), toFile: path.relative(root, target) });
        }
      }
    }
    return edges;
  } finally {
    api.close();
  }
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

export interface CycleReport {
  /** Cycles not in the allow-list: each fails the check. */
  unexpected: string[][];
  /** Allow-list entries that no longer occur: each fails the check until the entry is deleted. */
  stale: string[][];
  /** Cycles still present and listed. */
  known: string[][];
}

export function compareWithKnown(cycles: readonly string[][], known = KNOWN_CYCLES): CycleReport {
  const key = (folders: readonly string[]): string => [...folders].sort().join(' ');
  const knownKeys = new Set(known.map((entry) => key(entry.folders)));
  const found = new Set(cycles.map(key));
  return {
    unexpected: cycles.filter((cycle) => !knownKeys.has(key(cycle))),
    stale: known.filter((entry) => !found.has(key(entry.folders))).map((entry) => [...entry.folders].sort()),
    known: cycles.filter((cycle) => knownKeys.has(key(cycle))),
  };
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
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const edges = collectImportEdges(root);
  const report = compareWithKnown(findCycles(folderGraph(edges)));
  for (const cycle of report.known) console.log(`known cycle (allow-listed):\n${describeCycle(cycle, edges)}`);
  for (const cycle of report.unexpected) console.error(`import cycle:\n${describeCycle(cycle, edges)}`);
  for (const folders of report.stale) {
    console.error(`KNOWN_CYCLES lists {${folders.join(', ')}}, which no longer occurs: delete the entry`);
  }
  if (report.unexpected.length > 0 || report.stale.length > 0) process.exitCode = 1;
  else console.log('no folder-level import cycles beyond the allow-list');
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
