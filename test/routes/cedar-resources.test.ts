import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

// Resources and prompts are decided by the tenant's Cedar policies like tools: `read` on a Resource (the
// namespaced URI without `toolgate://`), `get` on a Prompt, at listing and at each read or get.
const POLICIES = `
permit(principal, action in [Action::"list", Action::"call"], resource);
@id("welcome-only") permit(principal, action == Action::"read", resource) when { resource.uri like "local/notes/note://welcome" };
@id("editors-prompts") permit(principal, action == Action::"get", resource) when { principal.roles.contains("editor") };
`;
const WELCOME = 'toolgate://local/notes/note://welcome';
const BROKEN = 'toolgate://local/notes/note://broken';
const PROMPT = 'local/notes/summarize';

let app: FastifyInstance;
beforeAll(async () => {
  app = await buildTestApp(
    testConfig({
      mcp: { local: [{ service: 'notes', module: './test/fixtures/mcp/notes-module.mjs' }] },
      tenants: { acme: { cedar: { policies: POLICIES } }, globex: {} },
    }),
  );
}, 60_000);
afterAll(async () => {
  await app?.close();
});

const get = (token: string, url: string) => app.inject({ url, headers: bearer(token) });

describe('Cedar on resources and prompts', () => {
  it('lists and reads only the resources a policy permits', async () => {
    const alice = await signToken({ sub: 'alice' });
    const uris = (await get(alice, '/v1/resources')).json<{ resources: Array<{ uri: string }> }>().resources.map((resource) => resource.uri);
    expect(uris).toContain(WELCOME);
    expect(uris).not.toContain(BROKEN);
    expect((await get(alice, `/v1/resources/read?uri=${encodeURIComponent(WELCOME)}`)).statusCode).toBe(200);
    const refused = await get(alice, `/v1/resources/read?uri=${encodeURIComponent(BROKEN)}`);
    expect(refused.statusCode).toBe(404);
    expect(refused.json().message).toBe(`unknown resource: ${BROKEN}`);
    // Another tenant without Cedar sees both.
    const gil = await signToken({ sub: 'gil', tenant: 'globex' });
    expect((await get(gil, '/v1/resources')).json<{ resources: Array<{ uri: string }> }>().resources.map((resource) => resource.uri)).toContain(BROKEN);
  });

  it('lists and gets prompts by role', async () => {
    const editor = await signToken({ sub: 'ed', roles: ['editor'] });
    const reader = await signToken({ sub: 'rita' });
    const names = async (token: string) => (await get(token, '/v1/prompts')).json<{ prompts: Array<{ name: string }> }>().prompts.map((prompt) => prompt.name);
    expect(await names(editor)).toContain(PROMPT);
    expect(await names(reader)).not.toContain(PROMPT);
    const asReader = await app.inject({ method: 'POST', url: '/v1/prompts/get', headers: bearer(reader), payload: { name: PROMPT, arguments: { topic: 'x' } } });
    expect(asReader.statusCode).toBe(404);
    const asEditor = await app.inject({ method: 'POST', url: '/v1/prompts/get', headers: bearer(editor), payload: { name: PROMPT, arguments: { topic: 'x' } } });
    expect(asEditor.statusCode).toBe(200);
  });
});
