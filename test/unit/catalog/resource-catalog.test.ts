import { describe, expect, it, vi } from 'vitest';
import { validateConfigObject } from '../../../src/config/load.js';
import { CatalogNotFound, getPrompt, listPrompts, listResources, MAX_LIST_PAGES, readResource, type CatalogRequest } from '../../../src/catalog/resource-catalog.js';
import { createCatalogGovernance } from '../../../src/catalog/resource-catalog-governance.js';
import type { McpService, McpServiceClient } from '../../../src/registry/tool-provider.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { silentLog } from '../../fixtures/mcp/context.js';

const tenantConfig = (tenant: Record<string, unknown>) => validateConfigObject({ tenants: { t: tenant } }, process.cwd(), undefined).tenants.t!;

/** A service whose client records every read; only `reachable` services are handed to the catalog. */
function fakeService(scope: McpService['scope'], service: string) {
  const readResourceCall = vi.fn(async ({ uri }: { uri: string }) => ({ contents: [{ uri, text: 'x'.repeat(30) }] }));
  const getPromptCall = vi.fn(async () => ({ messages: [{ role: 'user' as const, content: { type: 'image' as const, mimeType: 'image/png', data: 'A'.repeat(64) } }] }));
  const unused = async (): Promise<never> => {
    throw new Error('not listed in this test');
  };
  const client: McpServiceClient = {
    getServerCapabilities: () => ({ resources: {}, prompts: {} }),
    readResource: readResourceCall,
    getPrompt: getPromptCall,
    listResources: unused,
    listResourceTemplates: unused,
    listPrompts: unused,
  };
  const connect = vi.fn(async () => client);
  return { service: { scope, service, client: connect } satisfies McpService, connect, readResourceCall };
}

function request(services: McpService[], tenant: Record<string, unknown> = {}): CatalogRequest {
  const config = tenantConfig(tenant);
  const governance = createCatalogGovernance({ audit: { enabled: false, write() {}, async flush() {}, async close() {} }, store: createMemoryStore() });
  return { reachable: async () => ({ tenant: { config }, services }), log: silentLog, caller: { principal: { tenant: 't', user: 'u', roles: [], claims: {} }, requestId: 'r', via: 'rest', governance } };
}

describe('routing a read or a prompt to its owning service', () => {
  it('never connects to any service for a URI outside what the caller reaches, or one its globs deny', async () => {
    const mine = fakeService('global', 'mine');
    const cases: Array<[string, Record<string, unknown>]> = [
      ['toolgate://global/theirs/file:///etc/passwd', {}],
      ['toolgate://user/mine/file:///a', {}],
      ['toolgate://global/mine/file:///secret', { resources: { deny: ['*secret*'] } }],
      [`toolgate://global/mine/${'a'.repeat(5000)}`, {}],
    ];
    for (const [uri, tenant] of cases) {
      await expect(readResource(request([mine.service], tenant), uri)).rejects.toBeInstanceOf(CatalogNotFound);
    }
    expect(mine.connect).not.toHaveBeenCalled();
    await readResource(request([mine.service]), 'toolgate://global/mine/file:///a');
    expect(mine.readResourceCall).toHaveBeenCalledWith({ uri: 'file:///a' }, expect.objectContaining({ timeout: expect.any(Number) }));
  });

  it('cuts text past maxReadChars and replaces an image that no longer fits', async () => {
    const mine = fakeService('local', 'mine');
    const read = await readResource(request([mine.service], { resources: { maxReadChars: 10 } }), 'toolgate://local/mine/file:///a');
    expect(read).toEqual({ contents: [{ uri: 'toolgate://local/mine/file:///a', text: `${'x'.repeat(10)}…[truncated 20 chars]` }], _meta: { 'toolgate/truncated': true } });
    const prompt = await getPrompt(request([mine.service], { prompts: { maxResultChars: 10 } }), 'local/mine/p', undefined);
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: '[image image/png of 64 base64 chars omitted: over the size limit]' });
  });
});

describe('listing', () => {
  it('stops reading a server that pages forever, and leaves out a service that fails or lacks the capability', async () => {
    let pages = 0;
    const fails = async (): Promise<never> => {
      throw new Error('boom');
    };
    const endless: McpServiceClient = {
      getServerCapabilities: () => ({ resources: {} }),
      listResources: async () => ({ resources: [{ uri: `file:///${pages}`, name: String(pages++) }], nextCursor: 'more' }),
      listResourceTemplates: fails,
      readResource: fails,
      listPrompts: fails,
      getPrompt: fails,
    };
    const broken: McpServiceClient = { ...endless, listResources: fails };
    const noResources: McpServiceClient = { ...endless, getServerCapabilities: () => ({ prompts: {} }) };
    const services: McpService[] = [
      { scope: 'global', service: 'endless', client: async () => endless },
      { scope: 'global', service: 'broken', client: async () => broken },
      { scope: 'local', service: 'prompts-only', client: async () => noResources },
      { scope: 'local', service: 'down', client: async () => undefined },
    ];
    const resources = await listResources(request(services));
    expect(pages).toBe(MAX_LIST_PAGES);
    expect(resources).toHaveLength(MAX_LIST_PAGES);
    expect(resources[0]).toEqual({ uri: 'toolgate://global/endless/file:///0', name: 'global/endless/0' });
    expect(await listPrompts(request(services))).toEqual([]);
  });
});
