// The import graph's rules, checked by dependency-cruiser (`npm run check:cycles`, or
// `npx depcruise src routes policies test bench scripts` for these rules alone). Folder-level cycles are
// checked by scripts/check-import-cycles.ts over the graph dependency-cruiser builds with this file: its
// folders are src/<folder>, each src/mcp/<side>, each top-level src file, routes and policies, which
// dependency-cruiser's own folder scope (every ancestor folder a node) cannot express.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'policies-from-composition-root-only',
      comment:
        'policies/ holds policies only: the core never imports one. The composition root hands the built-in ' +
        'policies to the chain (src/app.ts), so nothing policies/ imports can import policies/ back.',
      severity: 'error',
      from: { path: '^(src|routes)/', pathNot: '^src/app\\.ts$' },
      to: { path: '^policies/' },
    },
    {
      name: 'policies-not-to-composition-root',
      comment: 'A policy sees the core through its contract (src/pipeline), never the app, the server or a route.',
      severity: 'error',
      from: { path: '^policies/' },
      to: { path: '^(routes/|src/(app|server|cli)\\.ts$)' },
    },
    {
      name: 'app-from-server-only',
      comment: 'src/app.ts is the composition root: only the entry points (and tests, benches) build the app.',
      severity: 'error',
      from: { path: '^(src|routes|policies)/', pathNot: '^src/(server|cli)\\.ts$' },
      to: { path: '^src/app\\.ts$' },
    },
    {
      name: 'core-not-to-tests-or-tools',
      comment: 'What ships (src, routes, policies) imports nothing from test/, bench/ or scripts/.',
      severity: 'error',
      from: { path: '^(src|routes|policies)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'no-bench-in-suite',
      comment:
        '`npm test` runs no benchmark: a test it collects (test/, outside test/bench/) imports nothing from bench/ ' +
        '(test/architecture/no-bench-in-suite.test.ts checks which files vitest collects).',
      severity: 'error',
      from: { path: '^test/', pathNot: '^test/bench/' },
      to: { path: '^bench/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves to a file or an installed package.',
      severity: 'error',
      // test/openapi-client/client.ts imports the client that test generates.
      from: { pathNot: '^test/openapi-client/client\\.ts$' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // The project compiles with TypeScript 7, whose package has no JS API for dependency-cruiser's `tsc`
    // parser: swc parses instead. It keeps every import declaration, `import type` included, so type-only
    // imports are edges (tsPreCompilationDeps), as the folder-cycle check requires.
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^test/openapi-client/codegen/|^test/fixtures/import-cycles/' },
    moduleSystems: ['es6', 'cjs'],
    // Packages resolve through their `exports` as Node resolves them (NodeNext); a relative `./x.js` is
    // found as the `./x.ts` beside it.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], mainFields: ['module', 'main'] },
  },
};
