// Operator modules' bare imports fall back to toolgate's dependencies (docs/configuration.md). Where Node has
// `module.registerHooks` the fallback runs in the importing thread: `module.register` started Node's loader
// thread, an isolate of its own that stayed resident (~20 MiB on Node 24; bench/results.md, issue 46).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { addDependencyFallback, dependencyFallback, type ModuleHooksApi, type ResolveHookSync } from '../../../src/modules/import-user-module.js';
import { packageRoot } from '../../../src/config/demo.js';

const FALLBACK = 'file:///opt/toolgate/package.json';
const notFound = (): Error => Object.assign(new Error('Cannot find package'), { code: 'ERR_MODULE_NOT_FOUND' });

/** A next step that resolves only from the fallback parent, recording what it was asked. */
function nextFrom(asked: Array<string | undefined>): Parameters<ResolveHookSync>[2] {
  return (specifier, context) => {
    asked.push(context?.parentURL);
    if (context?.parentURL !== FALLBACK) throw notFound();
    return { url: `file:///opt/toolgate/node_modules/${specifier}/index.js` };
  };
}

describe('the dependency fallback for operator modules', () => {
  it('is added in-thread through registerHooks where Node has it, and through register (a loader thread) where not', () => {
    const calls: string[] = [];
    const both: ModuleHooksApi = { register: () => calls.push('register'), registerHooks: () => calls.push('registerHooks') };
    expect(addDependencyFallback(both, FALLBACK)).toBe('in-thread');
    expect(calls).toEqual(['registerHooks']);
    calls.length = 0;
    const registerOnly: ModuleHooksApi = { register: (specifier, options) => calls.push(`register ${specifier.split(',')[0]} ${options.data.parentURL}`) };
    expect(addDependencyFallback(registerOnly, FALLBACK)).toBe('loader-thread');
    expect(calls).toEqual([`register data:text/javascript ${FALLBACK}`]);
  });

  it('resolves a bare specifier its folder cannot resolve from toolgate, and nothing else', () => {
    const hook = dependencyFallback(FALLBACK);
    const asked: Array<string | undefined> = [];
    expect(hook('yaml', { parentURL: 'file:///home/op/tool.mjs' }, nextFrom(asked)).url).toBe('file:///opt/toolgate/node_modules/yaml/index.js');
    expect(asked).toEqual(['file:///home/op/tool.mjs', FALLBACK]);
    for (const specifier of ['./local.mjs', '../up.mjs', '/abs.mjs', 'node:fs', 'file:///x.mjs', '#internal']) {
      expect(() => hook(specifier, { parentURL: 'file:///home/op/tool.mjs' }, nextFrom([]))).toThrow('Cannot find package');
    }
    // Another failure than not found stands; so does the first error when the fallback fails too.
    const broken = new Error('bad package.json');
    expect(() => hook('yaml', { parentURL: 'file:///home/op/tool.mjs' }, () => { throw broken; })).toThrow(broken);
    const first = notFound();
    let calls = 0;
    expect(() => hook('nope', { parentURL: 'file:///home/op/tool.mjs' }, () => { calls += 1; throw calls === 1 ? first : notFound(); })).toThrow(first);
  });

  describe('in a process', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-user-module-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("imports an operator module whose bare import only toolgate's dependencies have", () => {
      writeFileSync(join(dir, 'tool.mjs'), "import { parse } from 'yaml';\nexport const value = parse('a: 41').a + 1;\n");
      const script = `
        const { importUserModule } = await import(${JSON.stringify(pathToFileURL(join(packageRoot(), 'src/modules/import-user-module.ts')).href)});
        const mod = await importUserModule(${JSON.stringify(join(dir, 'tool.mjs'))});
        let missing = 'resolved';
        try { await importUserModule(${JSON.stringify(join(dir, 'missing.mjs'))}); } catch (error) { missing = error.code; }
        process.stdout.write(JSON.stringify({ value: mod.value, missing }));`;
      const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: packageRoot(), encoding: 'utf8', timeout: 30_000 });
      expect(child.stderr).toBe('');
      expect(JSON.parse(child.stdout)).toEqual({ value: 42, missing: 'ERR_MODULE_NOT_FOUND' });
    });
  });
});
