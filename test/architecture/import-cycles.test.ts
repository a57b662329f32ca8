import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cruiseProject, describeCycle, findCycles, folderGraph, folderOf, type FolderGraph } from '../../scripts/check-import-cycles.js';

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

describe('folderOf', () => {
  it('makes each src folder, each src/mcp side, each top-level src file, routes and policies a node', () => {
    expect(folderOf('src/registry/pool.ts')).toBe('src/registry');
    expect(folderOf('src/registry/deep/x.ts')).toBe('src/registry');
    expect(folderOf('src/errors.ts')).toBe('src/errors.ts');
    expect(folderOf('src/mcp/client/pinning.ts')).toBe('src/mcp/client');
    expect(folderOf('src/mcp/server/sessions.ts')).toBe('src/mcp/server');
    expect(folderOf('routes/tools.ts')).toBe('routes');
    expect(folderOf('policies/retry.ts')).toBe('policies');
    expect(folderOf('test/unit/x.test.ts')).toBeUndefined();
    expect(folderOf('node_modules/typebox/build/index.mjs')).toBeUndefined();
  });
});

describe('the graph dependency-cruiser builds (fixture)', () => {
  it('counts value and type imports, re-exports and dynamic imports, never comments or strings; fails on a cycle and on a rule', () => {
    const { edges, violations } = cruiseProject(fixtureRoot, ['src', 'policies']);
    expect(edges.map((edge) => `${edge.fromFile} -> ${edge.toFile}`).sort()).toEqual([
      'src/a/values.ts -> src/b/words.ts',
      'src/b/words.ts -> src/a/more.ts',
      'src/b/words.ts -> src/a/values.ts',
      'src/c/index.ts -> src/d/late.ts',
      'src/d/late.ts -> src/c/index.ts',
      'src/f/leaf.ts -> src/e/notes.ts',
      'src/g/uses-policy.ts -> policies/p.ts',
    ]);
    // {a, b} only through `import type`: a cycle all the same.
    expect(findCycles(folderGraph(edges))).toEqual([['src/a', 'src/b'], ['src/c', 'src/d']]);
    expect(violations).toEqual(['policies-from-composition-root-only: src/g/uses-policy.ts -> policies/p.ts']);
  }, 120_000);
});

describe('this repository', () => {
  it('has no rule violation and no folder-level import cycle among src/*, routes/ and policies/, type imports counted', () => {
    const { edges, violations } = cruiseProject(repoRoot);
    expect(edges.length).toBeGreaterThan(100);
    expect(violations).toEqual([]);
    expect(findCycles(folderGraph(edges)).map((cycle) => describeCycle(cycle, edges))).toEqual([]);
  }, 120_000);
});
