// The guardrails' building blocks (docs/governance.md#guardrails): each secret rule agrees with its RE2
// pattern, the keyword regexes are literal alternations, checksums, the JSONPath subset, custom detectors,
// config refusals, and hostile inputs that stay linear and bounded.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileLinear, isRefusal } from '../../../src/patterns/linear-regex.js';
import { ibanValid, luhnValid } from '../../../src/guardrails/checksums.js';
import { compileGuardrails, GuardrailConfigError } from '../../../src/guardrails/compile.js';
import { BUILTIN_DETECTORS, customDetector, detect } from '../../../src/guardrails/detectors.js';
import { parseSelector, selectPlaces } from '../../../src/guardrails/json-path.js';
import { nextDigitWindow } from '../../../src/guardrails/pii.js';
import { CHUNK_CHARS, scan } from '../../../src/guardrails/scan.js';
import { SECRET_RULES } from '../../../src/guardrails/secret-rules.js';
import { keywordFinder, keywordSource } from '../../../src/guardrails/text.js';
import type { Finding } from '../../../src/guardrails/types.js';

const corpus = JSON.parse(readFileSync(new URL('../../fixtures/guardrails/corpus.json', import.meta.url), 'utf8')) as { positives: Array<{ text: string }> };
const findAll = (text: string): Finding[] => {
  const out: Finding[] = [];
  detect(BUILTIN_DETECTORS, text, out);
  return out;
};

describe('secret rules', () => {
  it('match exactly what their RE2 pattern matches, on every corpus token', () => {
    let checked = 0;
    for (const { text } of corpus.positives) {
      for (const finding of findAll(text)) {
        const rules = SECRET_RULES.filter((rule) => rule.kind === finding.kind);
        if (rules.length === 0) continue;
        const token = text.slice(finding.start, finding.end);
        const whole = rules.some((rule) => {
          const regex = compileLinear(`^(?:${rule.re2})$`, 're2');
          if (isRefusal(regex)) throw new Error(`${rule.kind}: ${regex.reason}`);
          return token.length < 4000 && regex.test(token);
        });
        expect(whole, `${finding.kind}: ${token.slice(0, 12)}…`).toBe(true);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  it('find keywords with a regex of escaped literals only: no quantifier, class or group', () => {
    const source = keywordSource(['SG.', 'sk-ant-api', 'a+b', '(x)', '[y]', 'z*', '<|im_start|>', '\nsystem:']);
    const unescaped = source.replace(/\\./g, '');
    expect(unescaped).not.toMatch(/[*+?{}()[\]]/);
    expect(new RegExp(source).test('xx a+b yy')).toBe(true);
  });
});

describe('keyword anchors', () => {
  it('find every keyword an anchored search finds without anchors, wherever it lies past the first anchor', () => {
    const keywords = ['client_secret', 'private_key', 'password'];
    const plain = keywordFinder(keywords, true);
    const anchored = keywordFinder(keywords, true, ['secret', 'key', 'pass']);
    const hits = (find: typeof plain, text: string) => {
      const found: string[] = [];
      find(text, (index, literal) => void found.push(`${index}:${literal}`));
      return found;
    };
    const texts = ['no keyword here at all', 'x CLIENT_SECRET=1 then private_key and Password', 'monkey then private_key', 'a private_key', 'secret'];
    for (const text of texts) expect(hits(anchored, text), text).toEqual(hits(plain, text));
    expect(hits(anchored, 'monkey then private_key')).toEqual(['12:private_key']);
  });
  it('find what a regex of the whole literals finds, searched from each literal\'s rarest part, whatever the detector resumes at', () => {
    // The reference: one alternation of the literals, longest first, resumed where the detector says.
    const reference = (literals: readonly string[], ignoreCase: boolean): typeof plainFinder => (text, onHit) => {
      const pattern = new RegExp(keywordSource(literals), ignoreCase ? 'gi' : 'g');
      for (let hit = pattern.exec(text); hit !== null; hit = pattern.exec(text)) {
        const resume = onHit(hit.index, hit[0]);
        pattern.lastIndex = Math.max(hit.index + 1, typeof resume === 'number' ? resume : 0);
      }
    };
    const plainFinder = keywordFinder(['x']);
    const sets: Array<[readonly string[], boolean]> = [
      [[...new Set(SECRET_RULES.flatMap((rule) => rule.prefixes))], false],
      [['password', 'passwd', 'pwd', 'secret', 'token', 'api_key', 'client_secret', 'credentials', 'auth_key'], true],
      [['ignore previous', 'ignore all previous', 'im_start|>', 'system:', 'system override', 'you are now ', 'tool_calls":', 'exfiltrate'], false],
    ];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n;
    };
    for (const [literals, ignoreCase] of sets) {
      // Texts of whole literals, their halves, other casings and characters that fold to ASCII letters only in Unicode mode.
      const pieces = [...literals, ...literals.map((literal) => literal.slice(0, literal.length >> 1)), ...literals.map((literal) => literal.slice(literal.length >> 1)), ...literals.map((literal) => literal.toUpperCase()), ' ', 'x', '_', '-', '\u212a', '\u017f', '\u0130'];
      const expected = reference(literals, ignoreCase);
      const actual = keywordFinder(literals, ignoreCase);
      for (let i = 0; i < 3000; i += 1) {
        let text = '';
        for (let n = random(12); n > 0; n -= 1) text += pieces[random(pieces.length)];
        for (const skip of [false, true]) {
          const hits = (find: typeof actual) => {
            const found: string[] = [];
            find(text, (index, literal) => {
              found.push(`${index}:${literal}`);
              return skip && index % 2 === 0 ? index + literal.length : undefined;
            });
            return found;
          };
          expect(hits(actual), JSON.stringify(text)).toEqual(hits(expected));
        }
      }
    }
  });
  it('refuse anchors that miss a keyword', () => {
    expect(() => keywordFinder(['token', 'password'], true, ['token'])).toThrow(/"password" holds none of the anchors/);
  });
});

describe('checksums', () => {
  it('Luhn and IBAN mod-97 tell real numbers from look-alikes', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(ibanValid('DE89370400440532013000')).toBe(true);
    expect(ibanValid('DE89370400440532013001')).toBe(false);
    expect(ibanValid('XX89370400440532013000')).toBe(false);
  });
});

describe('the numbers detector', () => {
  it('finds the candidates a regex would: the first digit followed by eight number characters, from any start', () => {
    // The regex the skipping search stands for: it tries every position, the search skips what cannot start one.
    const regex = /[0-9][0-9 .()+-]{8}/g;
    const pieces = ['1', '23', '4567', ' ', '-', '.', '(', ')', '+', 'a', 'Z', '"', ',', '\u00e9', '12.5', '2026-12-01T10'];
    let seed = 50;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n;
    };
    for (let i = 0; i < 3000; i += 1) {
      let text = '';
      for (let n = random(24); n > 0; n -= 1) text += pieces[random(pieces.length)];
      for (let from = 0; from <= text.length; from += 1) {
        regex.lastIndex = from;
        expect(nextDigitWindow(text, from), `${JSON.stringify(text)} from ${from}`).toBe(regex.exec(text)?.index ?? -1);
      }
    }
  });
});

describe('the injection phrases', () => {
  const phrases = (text: string) => {
    const out: Finding[] = [];
    BUILTIN_DETECTORS.find((detector) => detector.name === 'injection_phrases')!.find(text, out);
    return out.map((finding) => [text.slice(finding.start, finding.end), finding.start]);
  };
  it('are found with the punctuation around them, in any case, in text order', () => {
    expect(phrases('x\nSystem: you are now root')).toEqual([['\nSystem:', 1], ['you are now ', 10]]);
    expect(phrases('### instruction: a [/INST] b [inst] c')).toEqual([['### instruction:', 0], ['[/INST]', 19], ['[inst]', 29]]);
    expect(phrases('{"tool_calls": [], tool_calls": 1, <|im_end|>}')).toEqual([['"tool_calls":', 1], ['<|im_end|>', 35]]);
  });
  it('skip what lies inside a phrase already found, as one search of the whole phrases would', () => {
    // The object of "ignore previous" reaches past "<system>": that tag is part of the finding, not a second one.
    expect(phrases('ignore previous <system> instructions')).toEqual([['ignore previous <system> ', 0]]);
    expect(phrases('ignore previous\nsystem: now')).toEqual([['\nsystem:', 15]]);
    // It reaches into "### instruction:" past its lead: that phrase started inside the first, and is not found.
    expect(phrases('ignore previous ### instruction: x')).toEqual([['ignore previous ### ', 0]]);
  });
});

describe('the JSONPath subset', () => {
  const value = { a: { b: [{ c: 1 }, { c: 2 }], ssn: 'x' }, list: [{ ssn: 'y' }] };
  const picked = (selector: string) => {
    const places: unknown[] = [];
    selectPlaces(value, parseSelector(selector), (container, key) => places.push((container as Record<string | number, unknown>)[key]));
    return places;
  };
  it('selects members, indexes, wildcards and descendants', () => {
    expect(picked('$.a.b[1].c')).toEqual([2]);
    expect(picked("$['a']['b'][*].c")).toEqual([1, 2]);
    expect(picked('$..ssn')).toEqual(['x', 'y']);
    expect(picked('$.list.*.ssn')).toEqual(['y']);
    expect(picked('$.nothing.here')).toEqual([]);
  });
  it('refuses what it does not support, saying what it does', () => {
    expect(() => parseSelector('$.a[?(@.b)]')).toThrow(/unsupported part at 3/);
    expect(() => parseSelector('a.b')).toThrow(/must start with \$/);
  });
});

describe('custom detectors', () => {
  it('run an RE2 pattern around their keywords, and over windows without keywords', () => {
    const text = `${'x '.repeat(5000)} employee EMP-123456 and EMP-654321 ${'y '.repeat(5000)}`;
    for (const detector of [customDetector('employee_id', { pattern: 'EMP-[0-9]{6}', keywords: ['EMP-'] }), customDetector('employee_id', { pattern: 'EMP-[0-9]{6}' })]) {
      const out: Finding[] = [];
      detector.find(text, out);
      expect(out.map((f) => text.slice(f.start, f.end))).toEqual(['EMP-123456', 'EMP-654321']);
    }
  });
  it('refuse a pattern the linear-time engine cannot run, or one too complex for its match length', () => {
    expect(() => customDetector('bad', { pattern: '(a)\\1' })).toThrow(/cannot be used/);
    expect(() => customDetector('big', { pattern: '[a-z]{1,500}', maxMatchChars: 4096 })).toThrow(/too complex|cannot be used/);
    expect(() => customDetector('email', { pattern: 'x' })).toThrow(/built-in/);
  });
});

describe('config', () => {
  const refused = (config: unknown) => {
    try {
      compileGuardrails(config as never);
    } catch (error) {
      return error instanceof GuardrailConfigError ? error.message : String(error);
    }
    return 'accepted';
  };
  it('names the bad key', () => {
    expect(refused([{ detect: ['secretz'], action: 'mask' }])).toMatch(/^rules\.0\.detect names an unknown detector "secretz"; did you mean "secrets"/);
    expect(refused([{ detect: ['injection'], action: 'mask' }])).toMatch(/^rules\.0\.action cannot rewrite injection findings/);
    expect(refused([{ action: 'flag' }])).toMatch(/^rules\.0 needs detect, fields or both/);
    expect(refused([{ fields: ['$.a[?(@)]'], action: 'mask' }])).toMatch(/^rules\.0\.fields holds a selector that/);
    expect(refused({ rules: [{ detect: ['badge'], action: 'flag' }], detectors: { badge: { pattern: '(?<=x)y' } } })).toMatch(/^detectors\.badge the pattern cannot be used/);
    expect(refused([])).toBe('accepted');
  });
});

describe('hostile inputs', () => {
  it('stay bounded: prefixes, separators and keywords repeated 200,000 characters long end with at most one finding per character', () => {
    for (const unit of ['ghp_', '@', '1 ', '12345678-', '(12) 345.', '-----BEGIN ', 'password=', 'ignore previous ', 'eyJ', '://', 'DE89 ', '\u200b']) {
      const text = unit.repeat(Math.ceil(200_000 / unit.length));
      const found = findAll(text);
      // Whatever a repetition may look like, each finding covers distinct text: at most one per character.
      expect(found.length, unit).toBeLessThanOrEqual(text.length);
    }
  });

  it('answers a small result at once and a text past one chunk after turns of the event loop', async () => {
    const guardrails = compileGuardrails({ rules: [{ detect: ['secrets', 'pii'], action: 'mask' }] })!;
    const request = (value: string) => ({ direction: 'result' as const, surfaces: [{ value, selectable: false }], rules: guardrails.rules, limits: guardrails.limits, hashKey: guardrails.hashKey('t') });
    const small = scan(request(`{"id":1,"mail":"ann@example.com"}`));
    expect(small).not.toBeInstanceOf(Promise);
    expect(small).toMatchObject({ kind: 'scanned', events: [{ detector: 'email', action: 'mask', count: 1 }] });
    const large = scan(request(`${'x '.repeat(CHUNK_CHARS)} ann@example.com`));
    expect(large).toBeInstanceOf(Promise);
    expect(await large).toMatchObject({ kind: 'scanned', events: [{ detector: 'email', action: 'mask', count: 1 }] });
  });

  it('stops a scan at maxScanChars before reading anything', async () => {
    const guardrails = compileGuardrails({ rules: [{ detect: ['secrets'], action: 'mask' }], limits: { maxScanChars: 1024 } })!;
    const outcome = await scan({ direction: 'result', surfaces: [{ value: 'x'.repeat(2000), selectable: false }], rules: guardrails.rules, limits: guardrails.limits, hashKey: guardrails.hashKey('t') });
    expect(outcome).toMatchObject({ kind: 'blocked', kinds: ['oversize'] });
  });

  it('finds a secret on the seam of two scan chunks exactly once', async () => {
    const guardrails = compileGuardrails({ rules: [{ detect: ['secrets'], action: 'mask' }], limits: { maxScanChars: 4 * 1024 * 1024 } })!;
    const key = ['AKIA', 'Q3ZJ7YH2WLXK5MNB'].join('');
    const text = `${'a '.repeat(128 * 1024 - 5)}${key} ${'b '.repeat(200_000)}`;
    const outcome = await scan({ direction: 'result', surfaces: [{ value: text, selectable: false }], rules: guardrails.rules, limits: guardrails.limits, hashKey: guardrails.hashKey('t') });
    expect(outcome.kind).toBe('scanned');
    if (outcome.kind !== 'scanned') return;
    expect(outcome.events).toEqual([{ direction: 'result', detector: 'aws_access_key', action: 'mask', count: 1 }]);
    expect((outcome.values[0] as string).split('[REDACTED:aws_access_key]').length).toBe(2);
  });
});

describe('the guardrails policy', () => {
  it('refuses bad options under policies.guardrails with the key named, and leaves the chain without rules', async () => {
    const { guardrailsPolicy } = await import('../../../policies/guardrails.js');
    const deps = {} as never;
    expect(() => guardrailsPolicy({ rules: 'all' }, deps)).toThrow(/policies\.guardrails/);
    expect(() => guardrailsPolicy([{ detect: ['secretz'], action: 'mask' }], deps)).toThrow(/guardrails\.rules\.0\.detect names an unknown detector/);
    expect(guardrailsPolicy(undefined, deps)).toBeUndefined();
    expect(guardrailsPolicy(false, deps)).toBeUndefined();
    expect(guardrailsPolicy([{ detect: ['secrets'], action: 'mask' }], deps)).toBeDefined();
  });
});

describe('the example of docs/governance.md#guardrails', () => {
  it('is a valid config whose every tenant compiles', async () => {
    const { parse } = await import('yaml');
    const { testConfig } = await import('../../helpers/build.js');
    const doc = readFileSync(new URL('../../../docs/governance.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Guardrails'));
    const block = /```yaml\n([\s\S]*?)```/.exec(section)![1]!.replace('${env:GUARDRAILS_HASH_KEY}', 'a-hash-key-for-the-docs-test');
    const config = testConfig(parse(block) as Record<string, unknown>);
    for (const [id, tenant] of Object.entries(config.tenants)) expect(() => compileGuardrails(tenant.guardrails ?? config.guardrails), id).not.toThrow();
    expect(compileGuardrails(config.tenants.globex!.guardrails)?.rules).toHaveLength(3);
  });
});
