/**
 * How to start a worker whose entry is the module `name` beside `moduleUrl`: `name.js` when running from the
 * build (dist/), the `.ts` source when running from sources (vitest, tsx). Node cannot load TypeScript in a
 * worker by itself, and a worker's `execArgv: ['--import', 'tsx']` does not reach the entry on Node 20, so from
 * sources the worker starts from a one-line bootstrap that registers tsx's loader and then imports the entry.
 */
export function workerEntry(name: string, moduleUrl: string): { entry: URL | string; options: { eval: boolean } } {
  const fromSources = moduleUrl.endsWith('.ts');
  const url = new URL(`${name}.${fromSources ? 'ts' : 'js'}`, moduleUrl);
  const entry = fromSources ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })` : url;
  return { entry, options: { eval: fromSources } };
}
