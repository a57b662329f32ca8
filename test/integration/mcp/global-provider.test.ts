import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { McpGlobalEntry } from '../../../src/config/types.js';
import { ToolError } from '../../../src/call/tool-error.js';
import { createGlobalMcpProvider, globalToolName } from '../../../src/mcp/client/global-provider.js';
import type { McpProvider } from '../../../src/mcp/client/mcp-provider.js';
import { alice, silentLog as log, toolContext } from '../../fixtures/mcp/context.js';
import { createTestState, echoTool, failTool, sleepTool, startHttpTestServer, type HttpTestServer } from '../../fixtures/mcp/test-server.js';

const servers: HttpTestServer[] = [];
const providers: McpProvider[] = [];

function entry(id: string, url: string, extra: Partial<McpGlobalEntry> = {}): McpGlobalEntry {
  return { id, transport: 'streamable-http', url, headers: {}, required: false, defer: false, pin: true, forwardIdentity: {}, ...extra } as McpGlobalEntry;
}

async function server(...tools: Parameters<typeof createTestState>[0]): Promise<HttpTestServer> {
  const started = await startHttpTestServer(createTestState(tools));
  servers.push(started);
  return started;
}

async function started(provider: McpProvider): Promise<McpProvider> {
  providers.push(provider);
  await provider.start?.();
  return provider;
}

afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.close?.()));
});
afterAll(async () => {
  await Promise.all(servers.splice(0).map((started) => started.close()));
});

describe('globalToolName', () => {
  it('keeps the upstream name, or prefixes the service id or a custom prefix, always legal', () => {
    expect(globalToolName({ id: 'everything' }, 'get-sum')).toBe('get-sum');
    expect(globalToolName({ id: 'everything', prefix: true }, 'get-sum')).toBe('everything_get-sum');
    expect(globalToolName({ id: 'everything', prefix: 'ev' }, 'files.read')).toBe('ev_files_read');
    expect(globalToolName({ id: 'x', prefix: false }, 'a'.repeat(80))).toHaveLength(64);
  });
});

describe('global MCP provider', () => {
  it('lets the service listed first win a name collision and reports the loser once', async () => {
    const first = await server(echoTool);
    const second = await server(echoTool, failTool);
    const onShadowed = vi.fn();
    const provider = await started(createGlobalMcpProvider([entry('a', first.url), entry('b', second.url)], { log, onShadowed }));
    expect(provider.tools().map((tool) => [tool.name, tool.service, tool.source])).toEqual([
      ['echo', 'a', 'global-mcp'],
      ['fail', 'b', 'global-mcp'],
    ]);
    provider.onChange?.(() => {});
    expect(onShadowed).toHaveBeenCalledTimes(1);
    expect(onShadowed).toHaveBeenCalledWith('echo', 'a', 'b');
  });

  it('applies prefix: true and defer: true', async () => {
    const upstream = await server(echoTool);
    const provider = await started(createGlobalMcpProvider([entry('everything', upstream.url, { prefix: true, defer: true, timeoutMs: 1234 })], { log }));
    const [tool] = provider.tools();
    expect(tool).toMatchObject({ name: 'everything_echo', deferLoading: true, searchHint: 'Echoes back the message', timeoutMs: 1234, readOnly: true, destructive: false });
  });

  it('forwards the principal identity and depth + 1, never the caller authorization', async () => {
    const upstream = await server(echoTool);
    const provider = await started(
      createGlobalMcpProvider(
        [
          entry('svc', upstream.url, {
            headers: { 'X-Api-Key': 'service-own-secret' },
            forwardIdentity: { 'X-Toolgate-Tenant': '${principal.tenant}', 'X-Toolgate-User': '${principal.user}', 'X-Dept': 'dept=${claims.department}' },
          }),
        ],
        { log },
      ),
    );
    upstream.headers.length = 0;
    const output = await provider.tools()[0]!.handler({ message: 'hi' }, toolContext({ depth: 4 }));
    expect(output).toEqual({ output: 'Echo: hi', trace: null });
    expect(upstream.headers).toHaveLength(1);
    expect(upstream.headers[0]).toMatchObject({ 'x-toolgate-tenant': 'acme', 'x-toolgate-user': 'alice', 'x-dept': 'dept=ops', 'x-toolgate-depth': '5', 'x-api-key': 'service-own-secret' });
    expect(upstream.allHeaders.every((headers) => headers.authorization === undefined)).toBe(true);
  });

  it('fails a call closed when an identity claim is missing', async () => {
    const upstream = await server(echoTool);
    const provider = await started(createGlobalMcpProvider([entry('svc', upstream.url, { forwardIdentity: { 'X-Team': '${claims.team}' } })], { log }));
    upstream.headers.length = 0;
    const error = await Promise.resolve(provider.tools()[0]!.handler({ message: 'x' }, toolContext({ principal: alice }))).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).errorType).toBe('PERMISSION_DENIED');
    expect(upstream.headers).toHaveLength(0);
  });

  it('cancels upstream when the call signal aborts', async () => {
    const state = createTestState([sleepTool]);
    const upstream = await startHttpTestServer(state);
    servers.push(upstream);
    const provider = await started(createGlobalMcpProvider([entry('svc', upstream.url)], { log }));
    const controller = new AbortController();
    const call = Promise.resolve(provider.tools()[0]!.handler({}, toolContext({ signal: controller.signal })));
    await vi.waitFor(() => expect(state.calls).toEqual(['sleep']));
    controller.abort();
    expect(((await call.catch((caught: unknown) => caught)) as ToolError).errorType).toBe('TIMEOUT');
    await vi.waitFor(() => expect(state.cancelled).toEqual(['sleep']));
  });

  it('reflects a required service that is down in status and keeps the others', async () => {
    const upstream = await server(echoTool);
    const gone = await startHttpTestServer(createTestState([]));
    await gone.close();
    const provider = await started(
      createGlobalMcpProvider([entry('dead', gone.url, { required: true }), entry('live', upstream.url)], { log, backoff: { initialMs: 60_000, maxMs: 60_000 } }),
    );
    expect(provider.status().map((status) => [status.service, status.state, status.required])).toEqual([
      ['dead', 'down', true],
      ['live', 'ready', false],
    ]);
    expect(provider.tools().map((tool) => tool.name)).toEqual(['echo']);
  });
});
