import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../src/config/load.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-openapi-config-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function load(yaml: string, env: NodeJS.ProcessEnv = {}) {
  const path = join(dir, `c-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(path, yaml);
  return loadConfigFile(path, env);
}

describe('openapi: config entries', () => {
  it('fills defaults, resolves the spec path against the config file and reads header secrets from the environment', async () => {
    const config = await load('openapi:\n  - name: github\n    spec: ./specs/github.json\n    headers: { authorization: "Bearer ${env:GH_TOKEN}" }\n', { GH_TOKEN: 't0k' });
    expect(config.openapi).toEqual([
      { name: 'github', spec: join(dir, 'specs/github.json'), include: ['*'], exclude: [], headers: { authorization: 'Bearer t0k' }, timeoutMs: 10000 },
    ]);
  });

  it('names an unknown key, a bad name and a non-http url', async () => {
    await expect(load('openapi:\n  - { name: gh, spec: ./a.json, baseURL: "https://x" }\n')).rejects.toThrow('/openapi/0: unknown key "baseURL"');
    await expect(load('openapi:\n  - { name: "9lives", spec: ./a.json }\n')).rejects.toThrow('/openapi/0/name: must match pattern');
    await expect(load('openapi:\n  - { name: gh, url: "ftp://x/spec.json" }\n')).rejects.toThrow('/openapi/0/url: must match pattern');
  });

  it('wants exactly one of spec and url, and unique names', async () => {
    await expect(load('openapi:\n  - { name: gh }\n')).rejects.toThrow('.yaml /openapi/0: give exactly one of "spec" (a file) or "url"');
    await expect(load('openapi:\n  - { name: gh, spec: ./a.json, url: "https://x/s.json" }\n')).rejects.toThrow('exactly one of');
    await expect(load('openapi:\n  - { name: gh, spec: "https://x/s.json" }\n')).rejects.toThrow('.yaml /openapi/0/spec: "spec" is a file path; use "url" for a document on the web');
    await expect(load('openapi:\n  - { name: gh, spec: ./a.json }\n  - { name: gh, spec: ./b.json }\n')).rejects.toThrow('.yaml /openapi/1/name: "gh" is declared twice');
  });
});
