import { describe, expect, it } from 'vitest';
import { stripTypes } from '../../../src/code-mode/strip-types.js';

describe('stripTypes', () => {
  it('blanks annotations of a script body, top-level return and await included', () => {
    const stripped = stripTypes('const a: number = (await tools.x({})) as number;\ninterface Q { a: string }\nreturn a;');
    expect(stripped).toEqual({ ok: true, code: expect.stringMatching(/^const a\s+= \(await tools\.x\(\{\}\)\)\s+;\s+\nreturn a;$/s) as unknown });
  });

  it('refuses what would need a real transform, and says where a syntax error is', () => {
    expect(stripTypes('enum E { A }')).toMatchObject({ ok: false, message: expect.stringContaining('enum') as unknown });
    expect(stripTypes('return 1 +;')).toEqual({ ok: false, message: 'Expression expected (line 1, column 10)' });
  });
});
