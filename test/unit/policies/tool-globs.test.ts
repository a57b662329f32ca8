// The policies' `tools` globs (approval, rate-limit, timeout, bind-arguments) run on the one engine every
// operator glob uses (src/patterns/name-globs.ts): the same matches for names, the same refusals at build.
import { describe, expect, it } from 'vitest';
import { approvalPolicy } from '../../../policies/approval.js';
import { bindArgumentsPolicy } from '../../../policies/bind-arguments.js';
import { rateLimitPolicy } from '../../../policies/rate-limit.js';
import { timeoutPolicy } from '../../../policies/timeout.js';
import { compileGlobs } from '../../../src/patterns/name-globs.js';
import { makeDeps, makeTool } from '../../helpers/policy-fixtures.js';

const names = ['write_file', 'read_file', 'list_files', 'bash', 'get_x', 'tool_7', 'resources.read', 'prompts.get'];

describe('policy tool globs', () => {
  it('match tool names as the access globs do: `*`, `?`, classes, {a,b}, extglobs, a leading `!`', () => {
    const cases: Array<[string[], string[]]> = [
      [['write_*'], ['write_file']],
      [['*_file'], ['write_file', 'read_file']],
      [['{read,write}_file'], ['write_file', 'read_file']],
      [['get_?', 'tool_[0-9]'], ['get_x', 'tool_7']],
      [['@(bash|tool_7)'], ['bash', 'tool_7']],
      [['resources.*'], ['resources.read']],
      [['!*_*'], ['bash', 'resources.read', 'prompts.get']],
      [['bash', 'prompts.get'], ['bash', 'prompts.get']],
      // Where picomatch 4 differed: `[!a]*` is a negated class (picomatch matched names starting with `a`),
      // and a numeric range is not expanded (picomatch's `{1..3}` matched tool_1…tool_3): it matches nothing here.
      [['[!bg]*'], ['write_file', 'read_file', 'list_files', 'tool_7', 'resources.read', 'prompts.get']],
      [['tool_{1..9}'], []],
    ];
    for (const [globs, matched] of cases) {
      const match = compileGlobs(globs);
      expect(names.filter((name) => match(name)), globs.join(' ')).toEqual(matched);
    }
  });

  it('decide which tools each policy applies to', () => {
    const deps = makeDeps();
    const tools = names.slice(0, 6).map((name) => makeTool({ name }));
    const applies = (layer: { appliesTo?: (tool: ReturnType<typeof makeTool>) => boolean } | undefined) => tools.filter((tool) => layer?.appliesTo?.(tool) ?? true).map((tool) => tool.name);
    expect(applies(approvalPolicy({ tools: ['write_*', 'bash'] }, deps))).toEqual(['write_file', 'bash']);
    expect(applies(rateLimitPolicy({ limit: 1, tools: ['*_file*'] }, deps))).toEqual(['write_file', 'read_file', 'list_files']);
    expect(applies(bindArgumentsPolicy({ bindings: { 'get_?': { user: '${principal.user}' } } }, deps))).toEqual(['get_x']);
  });

  it('refuse a glob the engine cannot run when the chain is built, naming the option', () => {
    const deps = makeDeps();
    expect(() => approvalPolicy({ tools: ['!(bash)'] }, deps)).toThrow(/^policies\.approval\.tools: the glob "!\(bash\)" cannot be used/);
    expect(() => rateLimitPolicy({ limit: 1, tools: ['!(bash)'] }, deps)).toThrow(/^policies\.rate-limit\.tools: the glob/);
    expect(() => timeoutPolicy({ tools: { '!(bash)': 5 } }, deps)).toThrow(/^policies\.timeout\.tools\["!\(bash\)"\]: the glob/);
    expect(() => bindArgumentsPolicy({ bindings: { '!(bash)': { a: 1 } } }, deps)).toThrow(/^bindings\["!\(bash\)"\]: the glob/);
    try {
      approvalPolicy({ tools: ['!(bash)'] }, deps);
    } catch (error) {
      expect((error as { code?: string }).code).toBe('TG_CONFIG_INVALID');
    }
  });
});
