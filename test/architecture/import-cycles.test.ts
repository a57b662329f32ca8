import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  collectImportEdges,
  compareWithKnown,
  describeCycle,
  findCycles,
  folderGraph,
  folderOf,
  type FolderGraph,
} from '../../scripts/check-import-cycles.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixtureRoot = path.join(repoRoot, 'test/fixtures/import-cycles');
const graph = (edges: Record<string, string[]>): FolderGraph =>
  new Map(Object.entries(edges).map(([from, to]) => [from, new Set(to)]));

describe('findCycles', () => {
  it('reports a two-folder cycle and ignores self-edges and one-way chains', () => {
    expect(findCycles(graph({ a: ['b', 'a'], b: ['a'], c: ['d'], d: [], e: ['e'] }))).toEqual([['a', 'b']]);
  });

  it('reports each strongly connected component once, with every folder in it', () => {
    const cycles = findCycles(graph({ x: ['y'], y: ['z'], z: ['x', 'p'], p: ['q'], q: ['p'], r: ['x'] }));
    expect(cycles).toEqual([['p', 'q'], ['x', 'y', 'z']]);
  });

  it('finds nothing in an acyclic graph', () => {
    expect(findCycles(graph({ routes: ['src/gateway.ts', 'src/errors.ts'], 'src/gateway.ts': ['src/errors.ts'] }))).toEqual([]);
  });
});

describe('compareWithKnown', () => {
  const known = [{ folders: ['b', 'a'], why: 'being removed' }];

  it('lets a listed cycle through and fails any other', () => {
    expect(compareWithKnown([['a', 'b'], ['c', 'd']], known)).toEqual({ unexpected: [['c', 'd']], stale: [], known: [['a', 'b']] });
  });

  it('fails an entry whose cycle is gone, so the entry is deleted with the fix', () => {
    expect(compareWithKnown([], known)).toEqual({ unexpected: [], stale: [['a', 'b']], known: [] });
  });
});

describe('folderOf', () => {
  it('makes each src folder, each top-level src file, routes and policies a node', () => {
    expect(folderOf('/r', '/r/src/registry/pool.ts')).toBe('src/registry');
    expect(folderOf('/r', '/r/src/registry/deep/x.ts')).toBe('src/registry');
    expect(folderOf('/r', '/r/src/errors.ts')).toBe('src/errors.ts');
    expect(folderOf('/r', '/r/src/mcp/client/pinning.ts')).toBe('src/mcp/client');
    expect(folderOf('/r', '/r/src/mcp/server/sessions.ts')).toBe('src/mcp/server');
    expect(folderOf('/r', '/r/routes/tools.ts')).toBe('routes');
    expect(folderOf('/r', '/r/policies/retry.ts')).toBe('policies');
    expect(folderOf('/r', '/r/test/unit/x.test.ts')).toBeUndefined();
  });
});

describe('collectImportEdges (TypeScript parser)', () => {
  it('counts value imports, re-exports and dynamic imports; skips type-only imports, comments and strings', () => {
    const edges = collectImportEdges(fixtureRoot);
    expect(edges.map((edge) => `${edge.fromFile} -> ${edge.toFile}`).sort()).toEqual([
      'src/a/values.ts -> src/b/words.ts',
      'src/c/index.ts -> src/d/late.ts',
      'src/d/late.ts -> src/c/index.ts',
    ]);
    expect(findCycles(folderGraph(edges))).toEqual([['src/c', 'src/d']]);
  }, 120_000);
});

describe('this repository', () => {
  it('has no folder-level value-import cycle among src/*, routes/ and policies/ beyond the allow-list', () => {
    const edges = collectImportEdges(repoRoot);
    expect(edges.length).toBeGreaterThan(100);
    const report = compareWithKnown(findCycles(folderGraph(edges)));
    expect(report.unexpected.map((cycle) => describeCycle(cycle, edges))).toEqual([]);
    expect(report.stale, 'KNOWN_CYCLES lists a cycle that is gone: delete its entry').toEqual([]);
  }, 120_000);
});
