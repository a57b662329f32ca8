// Scale: GitHub's published OpenAPI description (@octokit/openapi, ~1,200 operations) through the
// whole gateway. Timings of the same import live in `npm run bench` (bench/openapi.ts), not here.
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '../../../src/call/types.js';
import { bearer, buildTestApp, API_KEY, testConfig } from '../../helpers/build.js';

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);
const GITHUB_SPEC = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');

let app: FastifyInstance;
let github: Tool[];

beforeAll(async () => {
  app = await buildTestApp(testConfig({ openapi: [{ name: 'github', spec: GITHUB_SPEC }], tenants: { acme: { functions: ['github_*'] } } }));
  github = app.gateway.current().catalog.tools.filter((tool) => tool.service === 'openapi:github');
});
afterAll(async () => app?.close());

describe("OpenAPI import at GitHub's scale", () => {
  it('imports every non-deprecated operation, deferred', () => {
    const [status] = app.gateway.status().filter((upstream) => upstream.service === 'openapi:github');
    expect(status?.detail).toMatchObject({ openapi: '3.0.3', baseUrl: 'https://api.github.com', deferred: true });
    const { operations, imported, skipped } = status!.detail as { operations: number; imported: number; skipped: Record<string, number> };
    expect(operations).toBeGreaterThan(1000);
    expect(imported + Object.values(skipped).reduce((sum, count) => sum + count, 0)).toBe(operations);
    expect(Object.keys(skipped)).toEqual(['deprecated']);
    expect(github).toHaveLength(imported);
    expect(github.every((tool) => tool.deferLoading)).toBe(true);
  });

  it('gives every tool a unique legal name of at most 64 characters', () => {
    const names = github.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(names).toContain('github_repos_get');
  });

  it('generates schemas that all compile under ajv strict mode (union types allowed)', () => {
    // allowUnionTypes: OpenAPI 3.0 `nullable` becomes `type: [T, "null"]`, which strict mode wants opted into.
    const ajv = new Ajv({ strict: true, allowUnionTypes: true, addUsedSchema: false, code: { optimize: false } });
    addFormats(ajv);
    const failures: string[] = [];
    for (const tool of github) {
      try {
        ajv.compile(tool.inputSchema);
      } catch (error) {
        failures.push(`${tool.name}: ${(error as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('lists them without schemas and finds them through tool search with their full schemas', async () => {
    const listed = (await app.inject({ url: '/v1/tools', headers: bearer(API_KEY) })).json().tools as Array<Record<string, unknown>>;
    const repoGet = listed.find((tool) => tool.name === 'github_repos_get');
    expect(repoGet).toMatchObject({ deferLoading: true, searchHint: 'GET /repos/{owner}/{repo} (repos)' });
    expect(repoGet?.inputSchema).toBeUndefined();
    const found = (await app.inject({ url: '/v1/tools/search?q=github_repos_get&limit=1', headers: bearer(API_KEY) })).json().tools;
    expect(found[0]).toMatchObject({ name: 'github_repos_get', inputSchema: { required: ['owner', 'repo'] } });
  });
});
