import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isForeignUserToolName, parseUserToolName, userKey, userServiceKey, userToolName } from '../../../src/user-mcp/naming.js';

const hash12 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

describe('user-level MCP naming', () => {
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
    expect(parseUserToolName(name)?.userKey).toBe('123e4567-e89b-12d3-a456-426614174000');
    expect(userToolName('u', 'ok')).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('parses names whole, so user 1 never matches user 1_2 (ai4j leak)', () => {
    expect(parseUserToolName('user_1_tool_x')).toEqual({ userKey: '1', toolName: 'x' });
    expect(parseUserToolName('user_1_tool_a_tool_b')).toEqual({ userKey: '1', toolName: 'a_tool_b' });
    expect(parseUserToolName('user_1_2_tool_x')).toBeNull();
    expect(parseUserToolName(userToolName('1_2', 'x'))?.userKey).toBe(hash12('1_2'));
    expect(parseUserToolName('user__tool_x')).toBeNull();
    expect(parseUserToolName('xuser_1_tool_x')).toBeNull();
    expect(parseUserToolName('user_1_tool_')).toBeNull();
    expect(parseUserToolName('user_1_tool_x y')).toBeNull();
    expect(parseUserToolName(`user_1_tool_${'x'.repeat(60)}`)).toBeNull();
  });

  it('tells a foreign user prefix from the caller\'s own', () => {
    expect(isForeignUserToolName('user_alice_tool_x', 'bob')).toBe(true);
    expect(isForeignUserToolName('user_alice_tool_x', 'alice')).toBe(false);
    expect(isForeignUserToolName(userToolName('1_2', 'x'), '1')).toBe(true);
    expect(isForeignUserToolName('user_1_tool_x', '1_2')).toBe(true);
    expect(isForeignUserToolName('get_weather', 'alice')).toBe(false);
  });
});
