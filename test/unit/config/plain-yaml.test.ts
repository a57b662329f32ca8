import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { readPlainYaml } from '../../../src/config/plain-yaml.js';

const OPTIONS = { uniqueKeys: true, maxAliasCount: 100 } as const;

// Texts the reader takes: what it gives must be what the `yaml` package gives.
const PLAIN = [
  'acme:\n  tools:\n    allow:\n      - tool_*\n    deny:\n      - tool_05\n  roles:\n    viewer:\n      deny:\n        - tool_1*\n  policies:\n    rate-limit:\n      limit: 100\n      windowMs: 60000\n      per: user\n    approval:\n      tools:\n        - tool_19\n',
  'ops: {}\n',
  'a:\n  b: []\n  c:\n  d: 0\n  e: -12\n  f: bench tool 3\n',
  '# a comment\na:\n\n  # inside\n  b: x.y/z-1\n',
  '- a\n- b_c\n',
  'a:\n  b:\n    c: 1\n  d: 2\ne: 3\n',
];

// Texts it leaves to the `yaml` package: each is read differently, or is an error, or is subtle there.
const NOT_PLAIN = [
  'a: true\n',
  'a: False\n',
  'a: null\n',
  'a: NULL\n',
  'a: ~\n',
  'a: yes\n',
  'true: 1\n',
  'a: 1.5\n',
  'a: 0x1F\n',
  'a: 007\n',
  'a: -0\n',
  'a: 1e3\n',
  'a: .inf\n',
  'a: "quoted"\n',
  "a: 'quoted'\n",
  'a: b # comment\n',
  'a: b:c\n',
  'a: *anchor\n',
  'a: &anchor b\n',
  'a: !!str 1\n',
  'a: { b: 1 }\n',
  'a: [b]\n',
  'a: |\n  text\n',
  'a: b\n  c\n',
  'a:\n- b\n',
  'a: 1\na: 2\n',
  '__proto__: 1\n',
  'a:\tb\n',
  'a: b \n',
  'a: b\r\n',
  '"a b": 1\n',
  '---\na: 1\n',
  '  a: 1\nb: 2\n',
  'a:\n    b: 1\n  c: 2\n',
  'a:\n  - b: 1\n',
  'a:\n  -\n',
  '',
  '# only a comment\n',
];

describe('readPlainYaml', () => {
  it('reads the plain part of YAML as the yaml package does', () => {
    for (const text of PLAIN) {
      const read = readPlainYaml(text);
      expect(read, text).toBeDefined();
      expect(read!.value, text).toStrictEqual(parse(text, OPTIONS));
    }
  });

  it('leaves everything else to the yaml package', () => {
    for (const text of NOT_PLAIN) expect(readPlainYaml(text), JSON.stringify(text)).toBeUndefined();
  });

  it('never reads a text differently from the yaml package', () => {
    // Every line of the texts above, moved and mixed: whatever the reader takes, it reads as the package does.
    const lines = [...PLAIN, ...NOT_PLAIN].flatMap((text) => text.split('\n'));
    let seed = 46;
    const next = (bound: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % bound);
    let taken = 0;
    for (let round = 0; round < 3000; round += 1) {
      const text = Array.from({ length: 1 + next(6) }, () => ' '.repeat(2 * next(3)) + lines[next(lines.length)]!.trimStart()).join('\n');
      const read = readPlainYaml(text);
      if (read === undefined) continue;
      taken += 1;
      expect(read.value, JSON.stringify(text)).toStrictEqual(parse(text, OPTIONS));
    }
    expect(taken).toBeGreaterThan(300);
  });
});
