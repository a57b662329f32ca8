import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createNameMap, generateApiFunctionName, sanitizeUpstreamName } from '../../../../src/mcp/client/naming.js';

const LEGAL = /^[A-Za-z0-9_-]{1,64}$/;
const hash8 = (value: string): string => createHash('sha256').update(value).digest('hex').slice(0, 8);

describe('generateApiFunctionName', () => {
  it('joins service and tool with an underscore', () => {
    expect(generateApiFunctionName('calc', 'add')).toBe('calc_add');
  });

  it('replaces illegal characters and collapses the resulting underscore runs', () => {
    expect(generateApiFunctionName('my service', 'get.weather//now')).toBe('my_service_get_weather_now');
    expect(generateApiFunctionName('a__b', '__c')).toBe('a_b_c');
  });

  it('keeps hyphens as they are', () => {
    expect(generateApiFunctionName('fs-local', 'read-file')).toBe('fs-local_read-file');
  });

  it('strips leading and trailing underscores', () => {
    expect(generateApiFunctionName('_svc_', 'tool_')).toBe('svc_tool');
  });

  it('prefixes tool_ when the name starts with a digit or a hyphen', () => {
    expect(generateApiFunctionName('1svc', 'x')).toBe('tool_1svc_x');
    expect(generateApiFunctionName('-svc', 'x')).toBe('tool_-svc_x');
  });

  it('prefixes tool_ when nothing legal is left', () => {
    expect(generateApiFunctionName('', '')).toBe('tool_');
    expect(generateApiFunctionName('日本', '語')).toBe('tool_');
  });

  it('turns unicode letters into underscores', () => {
    expect(generateApiFunctionName('café', 'naïve')).toBe('caf_na_ve');
  });

  it('applies the tool_ prefix before the 64 cap, so the result never exceeds 64', () => {
    const name = generateApiFunctionName('9'.repeat(40), 'x'.repeat(30));
    expect(name.length).toBe(64);
    expect(name).toMatch(LEGAL);
    expect(name.startsWith('tool_999')).toBe(true);
    expect(name.endsWith(`_${hash8(`tool_${'9'.repeat(40)}_${'x'.repeat(30)}`)}`)).toBe(true);
  });

  it('shortens a 70-character name deterministically instead of cutting it', () => {
    const first = generateApiFunctionName('s'.repeat(35), 't'.repeat(34));
    expect(first).toHaveLength(64);
    expect(first).toBe(generateApiFunctionName('s'.repeat(35), 't'.repeat(34)));
    expect(first).not.toBe(generateApiFunctionName('s'.repeat(35), `${'t'.repeat(33)}u`));
  });
});

describe('sanitizeUpstreamName', () => {
  it('keeps legal upstream names exactly', () => {
    expect(sanitizeUpstreamName('get-sum')).toBe('get-sum');
  });

  it('replaces each illegal character without collapsing', () => {
    expect(sanitizeUpstreamName('files.read..all')).toBe('files_read__all');
    expect(sanitizeUpstreamName('ü')).toBe('_');
  });

  it('shortens long upstream names to a legal one', () => {
    expect(sanitizeUpstreamName('x.'.repeat(40))).toMatch(LEGAL);
  });
});

describe('createNameMap', () => {
  it('maps both ways and forgets both sides on delete', () => {
    const map = createNameMap();
    map.set('everything_echo', 'everything', 'echo');
    expect(map.upstreamOf('everything_echo')).toEqual({ service: 'everything', tool: 'echo' });
    expect(map.exposedOf('everything', 'echo')).toBe('everything_echo');
    map.delete('everything_echo');
    expect(map.upstreamOf('everything_echo')).toBeUndefined();
    expect(map.exposedOf('everything', 'echo')).toBeUndefined();
    expect(map.size).toBe(0);
  });

  it('rebinding an exposed name drops the old reverse entry', () => {
    const map = createNameMap();
    map.set('echo', 'a', 'echo');
    map.set('echo', 'b', 'echo');
    expect(map.exposedOf('a', 'echo')).toBeUndefined();
    expect(map.exposedOf('b', 'echo')).toBe('echo');
  });
});
