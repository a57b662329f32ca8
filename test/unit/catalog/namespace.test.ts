import { describe, expect, it } from 'vitest';
import { compileAllowDeny, compileNameGlobs, namespacedUri, parseName, parseUri } from '../../../src/catalog/namespace.js';

describe('namespaced resource URIs and prompt names', () => {
  it('keeps the upstream URI verbatim after scope and service, and parses it back to exactly one service', () => {
    const uri = namespacedUri('global', 'everything', 'demo://resource/dynamic/text/{resourceId}');
    expect(uri).toBe('toolgate://global/everything/demo://resource/dynamic/text/{resourceId}');
    expect(parseUri(uri)).toEqual({ scope: 'global', service: 'everything', upstream: 'demo://resource/dynamic/text/{resourceId}' });
    expect(parseName('user/notes/a/b')).toEqual({ scope: 'user', service: 'notes', upstream: 'a/b' });
  });

  it('refuses what names no service', () => {
    for (const bad of ['demo://x', 'toolgate://tenant/acme/x', 'toolgate://global//x', 'toolgate://global/everything/', 'toolgate://global/everything', 'global/everything/x']) {
      expect(parseUri(bad)).toBeUndefined();
    }
    expect(parseName('other/everything/x')).toBeUndefined();
    expect(parseName('global/everything')).toBeUndefined();
  });
});

describe('resource and prompt globs', () => {
  it('lets * span slashes, ? one character, and takes everything else literally', () => {
    const match = compileNameGlobs(['global/everything/demo://resource/static/*', 'local/calc/?.md']);
    expect(match('global/everything/demo://resource/static/document/a.md')).toBe(true);
    expect(match('global/everything/demo://resource/dynamic/text/1')).toBe(false);
    expect(match('local/calc/a.md')).toBe(true);
    expect(match('local/calc/ab.md')).toBe(false);
    expect(compileNameGlobs(['a.b'])('axb')).toBe(false);
    expect(compileNameGlobs([])('anything')).toBe(false);
  });

  it('admits what an allow glob matches and no deny glob does', () => {
    const admits = compileAllowDeny({ allow: ['global/*'], deny: ['*secret*'] });
    expect(admits('global/everything/simple-prompt')).toBe(true);
    expect(admits('global/everything/secret-prompt')).toBe(false);
    expect(admits('local/calc/simple-prompt')).toBe(false);
  });
});

describe('resource and prompt globs meet upstream names on the linear-time engine', () => {
  it('matches a glob with many stars against a long upstream URI at once, and fails closed past the match budget', () => {
    const uri = `user/own/${'a'.repeat(3000)}`;
    const started = performance.now();
    expect(compileNameGlobs(['*a*a*a*a*a*a*a*ab'])(uri)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000); // generous: a backtracking engine takes hours
    const huge = `user/own/${'a'.repeat(200_000)}`;
    const rules = compileAllowDeny({ allow: ['user/*'], deny: ['*secret*'] });
    expect(rules(`user/own/${'a'.repeat(100)}`)).toBe(true);
    expect(rules(huge)).toBe(false); // too long to check against the deny glob: denied
    expect(compileNameGlobs(['user/*'])(huge)).toBe(false);
  });

  it('keeps every other character literal, newlines and regex syntax included', () => {
    expect(compileNameGlobs(['a(b)[c]{d}|e\\f.g+h^$'])('a(b)[c]{d}|e\\f.g+h^$')).toBe(true);
    expect(compileNameGlobs(['*x'])('line\nx')).toBe(true);
    expect(compileNameGlobs(['é?'])('é\n')).toBe(true);
  });
});
