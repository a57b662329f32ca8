// The OpenAPI config of docs/tools.md, as written, with GitHub's published description as the spec file.
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';
import { loadConfigFile } from '../../src/config/load.js';
import { docBlock } from '../helpers/doc-blocks.js';
import { bearer, buildTestApp, signToken, sha256, API_KEY } from '../helpers/build.js';

const GITHUB_SPEC = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
let dir: string;
let app: FastifyInstance;

beforeAll(async () => {
  const block = docBlock('docs/tools.md', 'openapi-config', 'yaml');
  dir = await mkdtemp(join(tmpdir(), 'toolgate-docs-openapi-'));
  await mkdir(join(dir, 'specs'));
  await symlink(GITHUB_SPEC, join(dir, 'specs/api.github.com.json'));
  const auth = `auth:\n  jwt: { secret: "${'s'.repeat(40)}", issuer: https://issuer.test, audience: toolgate }\n  apiKeys: [{ id: ci, sha256: "${sha256(API_KEY)}", tenant: acme, user: ci-bot }]\naudit: { sink: "off" }\nlogging: { level: silent }\n`;
  await writeFile(join(dir, 'toolgate.yaml'), `${auth}${block}`);
  app = await buildTestApp(await loadConfigFile(join(dir, 'toolgate.yaml'), { GITHUB_TOKEN: 'ghp_example' }));
});
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the OpenAPI example of docs/tools.md', () => {
  it('exposes the included GitHub operations, deferred, minus the excluded ones', async () => {
    const tools = (await app.inject({ url: '/v1/tools', headers: bearer(API_KEY) })).json().tools as Array<{ name: string; deferLoading?: boolean }>;
    const github = tools.filter((tool) => tool.name.startsWith('github_'));
    const names = github.map((tool) => tool.name);
    expect(names).toContain('github_repos_get');
    expect(names).toContain('github_issues_create');
    expect(names).not.toContain('github_repos_delete');
    expect(names.some((name) => name.startsWith('github_pulls_'))).toBe(false);
    expect(github.every((tool) => tool.deferLoading === true)).toBe(true);
  });

  it('hides the bound owner from the schema tool_search returns', async () => {
    const token = await signToken({ org: 'acme-corp' }, { secret: 's'.repeat(40) });
    const found = (await app.inject({ url: '/v1/tools/search?q=github_repos_get&limit=1', headers: bearer(token) })).json().tools;
    expect(found[0].name).toBe('github_repos_get');
    expect(found[0].inputSchema.required).toEqual(['repo']);
    expect(Object.keys(found[0].inputSchema.properties)).toEqual(['repo']);
  });
});
