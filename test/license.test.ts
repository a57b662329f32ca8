// The project is licensed under Apache-2.0: the LICENSE file holds the licence's full text, and
// package.json and the API document name the same licence.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from '../src/config/demo.js';
import { openapiDocument } from '../src/openapi.js';

const root = packageRoot();

describe('the licence', () => {
  it('LICENSE is the full Apache License 2.0 text, and package.json, its lockfile and openapi.yaml say Apache-2.0', () => {
    const text = readFileSync(join(root, 'LICENSE'), 'utf8');
    expect(text).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(text).toContain('TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION');
    expect(text).toContain('END OF TERMS AND CONDITIONS');
    expect(text.split('\n').length).toBeGreaterThan(200);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string };
    expect(pkg.license).toBe('Apache-2.0');
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { license?: string }> };
    expect(lock.packages['']!.license).toBe('Apache-2.0');
    expect(openapiDocument.info.license).toEqual({ name: 'Apache-2.0', identifier: 'Apache-2.0' });
    const served = parseYaml(readFileSync(join(root, 'openapi.yaml'), 'utf8')) as { info: { license: unknown } };
    expect(served.info.license).toEqual({ name: 'Apache-2.0', identifier: 'Apache-2.0' });
  });
});
