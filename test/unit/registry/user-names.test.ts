import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { resolveToolName } from '../../../src/registry/resolve.js';
import { userKey, userNamespace, userServiceKey, userToolName, userToolPrefix } from '../../../src/registry/user-names.js';
import { catalogOf, poolOf, tenantConfig, tool } from '../../helpers/registry.js';

const hash12 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

describe('the user tool namespace', () => {
  it('uses a plain sub as its own key and hashes any other', () => {
    expect(userKey('alice-1')).toBe('alice-1');
    expect(userKey('1_2')).toBe(hash12('1_2'));
    expect(userKey('auth0|abc/def')).toBe(hash12('auth0|abc/def'));
    expect(userKey('josé')).toBe(hash12('josé'));
    expect(userKey('a'.repeat(41))).toBe(hash12('a'.repeat(41)));
    expect(userKey('123e4567-e89b-12d3-a456-426614174000')).toBe('123e4567-e89b-12d3-a456-426614174000');
  });

  it('builds service keys and tool names with the contract shapes', () => {
    expect(userServiceKey('alice', 'notes')).toBe('user_alice_service_notes');
    expect(userToolName('alice', 'search')).toBe('user_alice_tool_search');
    expect(userToolName('alice', 'a.b c/d')).toBe('user_alice_tool_a_b_c_d');
  });

  it('shortens long names deterministically to 64 characters, keeping the user prefix', () => {
    const long = 'x'.repeat(100);
    const name = userToolName('123e4567-e89b-12d3-a456-426614174000', long);
    expect(name).toHaveLength(64);
    expect(name).toBe(userToolName('123e4567-e89b-12d3-a456-426614174000', long));
    expect(name).not.toBe(userToolName('123e4567-e89b-12d3-a456-426614174000', `${long}y`));
    const full = `user_123e4567-e89b-12d3-a456-426614174000_tool_${long}`;
    expect(name.endsWith(`_${createHash('sha256').update(full).digest('hex').slice(0, 8)}`)).toBe(true);
    expect(name.startsWith(userToolPrefix('123e4567-e89b-12d3-a456-426614174000'))).toBe(true);
    expect(userToolName('u', 'ok')).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  // Routing's answer for a name the caller's tenant has in its catalog but not in the caller's pool:
  // PERMISSION_DENIED when the name is the caller's own or no user's, UNKNOWN_TOOL when it is in another
  // user's namespace (refused before any lookup, so the answer tells nothing about that user).
  const answerFor = (name: string, sub: string) => {
    const catalog = catalogOf([tool(name, 'user-mcp')]);
    const result = resolveToolName(name, poolOf(catalogOf([]), tenantConfig()), catalog, userNamespace(sub), () => true);
    return result.ok ? 'ok' : result.errorType;
  };

  it("refuses a name in another user's namespace and lets the caller's own through", () => {
    expect(answerFor('user_alice_tool_x', 'bob')).toBe('UNKNOWN_TOOL');
    expect(answerFor('user_alice_tool_x', 'alice')).toBe('PERMISSION_DENIED');
    expect(answerFor(`user_alice_tool_${'x'.repeat(80)}`, 'bob')).toBe('UNKNOWN_TOOL');
    expect(answerFor('get_weather', 'alice')).toBe('PERMISSION_DENIED');
  });

  it('matches the user key whole, so user 1 never reaches user 1_2 or the other way (ai4j leak)', () => {
    expect(userToolPrefix('1')).toBe('user_1_tool_');
    expect(userToolName('1_2', 'x')).toBe(`user_${hash12('1_2')}_tool_x`);
    expect(answerFor(userToolName('1_2', 'x'), '1')).toBe('UNKNOWN_TOOL');
    expect(answerFor('user_1_tool_x', '1_2')).toBe('UNKNOWN_TOOL');
    expect(answerFor('user_1_tool_a_tool_b', '1')).toBe('PERMISSION_DENIED');
  });
});
