import { describe, expect, it } from 'vitest';
import { listOperations, selectOperations } from '../../../src/openapi-tools/operations.js';
import { compileGlobs } from '../../../src/patterns/name-globs.js';
import { buildTestApp, testConfig } from '../../helpers/build.js';

describe("the operator's name globs", () => {
  it('match tool names as before (`*` within a name, {a,b}, ?, classes)', () => {
    const match = compileGlobs(['write_*', '{read,list}_file', 'get_?', 'tool_[0-9]']);
    for (const name of ['write_file', 'read_file', 'list_file', 'get_x', 'tool_7']) expect(match(name), name).toBe(true);
    for (const name of ['rewrite_file', 'readfile', 'get_xy', 'tool_a', 'write']) expect(match(name), name).toBe(false);
    expect(compileGlobs(['*'])('anything')).toBe(true);
    expect(compileGlobs([])('anything')).toBe(false);
  });

  it("meet an imported document's operationIds and tags on the linear-time engine", () => {
    const long = 'a'.repeat(5000);
    const operations = listOperations({ openapi: '3.1.0', paths: { '/x': { get: { operationId: long, tags: [long], responses: {} } } } });
    const started = performance.now();
    expect(selectOperations(operations, { include: ['*a*a*a*a*a*a*ab'], exclude: [] }).selected).toEqual([]);
    expect(performance.now() - started).toBeLessThan(1000); // generous: picomatch takes hours on this
    // A name too long to check within the match budget matches nothing.
    expect(compileGlobs(['a*'])('a'.repeat(200_000))).toBe(false);
  });

  it('refuses a configuration whose glob the engine cannot run, naming it', async () => {
    expect(() => compileGlobs(['!(bash)'])).toThrow(/^the glob "!\(bash\)" cannot be used: "!\(\.\.\.\)" \(a negated extglob\) needs look-ahead/);
    await expect(buildTestApp(testConfig({ tenants: { acme: { tools: { deny: ['!(bash)'] } }, globex: {} } }))).rejects.toThrow(/the glob "!\(bash\)" cannot be used/);
  });

  it('hands tenants of the same globs one matcher, and a different list its own', () => {
    const globs = ['tool_*', 'x_{a,b}', 'literal'];
    expect(compileGlobs([...globs])).toBe(compileGlobs([...globs]));
    const other = compileGlobs(['tool_1*', 'x_{a,b}', 'literal']);
    expect(other).not.toBe(compileGlobs(globs));
    expect([other('tool_19'), other('tool_29'), compileGlobs(globs)('tool_29')]).toEqual([true, false, true]);
  });
});
