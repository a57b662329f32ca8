import pino from 'pino';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ToolError } from '../../../src/call/tool-error.js';
import { createUpstreamClient, type UpstreamClient } from '../../../src/mcp/client/upstream-client.js';
import {
  buildTestServer,
  createTestState,
  echoTool,
  failTool,
  notifyToolsChanged,
  sleepTool,
  startHttpTestServer,
  type HttpTestServer,
} from '../../fixtures/mcp/test-server.js';

const log = pino({ level: 'silent' });
const fast = { initialMs: 10, maxMs: 100, factor: 2 };
const clients: UpstreamClient[] = [];
const servers: HttpTestServer[] = [];

function track(client: UpstreamClient): UpstreamClient {
  clients.push(client);
  return client;
}

async function rejection(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});
afterAll(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('upstream client over the in-memory transport', () => {
  it('lists every page of a paginated listing and calls a tool', async () => {
    const state = createTestState([echoTool, failTool, sleepTool], 1);
    const client = track(createUpstreamClient({ service: 'mem', kind: 'local-mcp', config: { transport: 'in-memory', server: () => buildTestServer(state) }, log }));
    await client.start();
    expect(client.status()).toMatchObject({ service: 'mem', state: 'ready', toolCount: 3 });
    expect(client.tools().map((tool) => tool.name)).toEqual(['echo', 'fail', 'sleep']);
    const result = await client.callTool('echo', { message: 'hi' });
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: hi' }]);
  });

  it('re-lists on notifications/tools/list_changed and tells its listeners', async () => {
    const state = createTestState([echoTool]);
    const client = track(createUpstreamClient({ service: 'mem', kind: 'local-mcp', config: { transport: 'in-memory', server: () => buildTestServer(state) }, log }));
    await client.start();
    const changed = vi.fn();
    client.onChange(changed);
    state.tools = [echoTool, sleepTool];
    await notifyToolsChanged(state);
    await vi.waitFor(() => expect(client.tools().map((tool) => tool.name)).toEqual(['echo', 'sleep']));
    expect(changed).toHaveBeenCalled();
  });

  it('cancels the upstream call when the AbortSignal fires and answers TIMEOUT', async () => {
    const state = createTestState([sleepTool]);
    const client = track(createUpstreamClient({ service: 'mem', kind: 'local-mcp', config: { transport: 'in-memory', server: () => buildTestServer(state) }, log }));
    await client.start();
    const controller = new AbortController();
    const call = client.callTool('sleep', {}, { signal: controller.signal });
    await vi.waitFor(() => expect(state.calls).toEqual(['sleep']));
    controller.abort(new Error('timeout policy'));
    const error = await rejection(call);
    expect(error.errorType).toBe('TIMEOUT');
    await vi.waitFor(() => expect(state.cancelled).toEqual(['sleep']));
    expect(client.status().state).toBe('ready');
  });

  it("answers with the abort reason a policy gave the call's signal (a ToolError) and cancels upstream", async () => {
    const state = createTestState([sleepTool, echoTool]);
    const client = track(createUpstreamClient({ service: 'mem', kind: 'local-mcp', config: { transport: 'in-memory', server: () => buildTestServer(state) }, log }));
    await client.start();
    expect((await client.callTool('echo', { message: 'hi' }, { signal: new AbortController().signal })).content).toEqual([{ type: 'text', text: 'Echo: hi' }]);
    const attempt = new AbortController();
    const call = client.callTool('sleep', {}, { signal: attempt.signal });
    await vi.waitFor(() => expect(state.calls).toContain('sleep'));
    attempt.abort(new ToolError('TIMEOUT', 'sleep timed out after 5 ms'));
    expect(await rejection(call)).toMatchObject({ errorType: 'TIMEOUT', message: 'sleep timed out after 5 ms' });
    await vi.waitFor(() => expect(state.cancelled).toEqual(['sleep']));
  });

  it('refuses calls after close and never reconnects', async () => {
    const state = createTestState([echoTool]);
    const client = createUpstreamClient({ service: 'mem', kind: 'local-mcp', config: { transport: 'in-memory', server: () => buildTestServer(state) }, log, backoff: fast });
    await client.start();
    await client.close();
    expect(client.status().state).toBe('closed');
    expect((await rejection(client.callTool('echo', { message: 'x' }))).errorType).toBe('UPSTREAM_ERROR');
    expect(state.servers.size).toBe(0);
  });
});

describe('upstream client over streamable HTTP', () => {
  it('forwards depth + 1, static and identity headers, but never the caller authorization', async () => {
    const server = await startHttpTestServer(createTestState([echoTool]));
    servers.push(server);
    const client = track(
      createUpstreamClient({
        service: 'http',
        kind: 'global-mcp',
        config: { transport: 'streamable-http', url: server.url, headers: { 'X-Service-Key': 'svc-secret' } },
        log,
      }),
    );
    await client.start();
    server.headers.length = 0;
    await client.callTool('echo', { message: 'hi' }, { depth: 2, headers: { 'X-Toolgate-Tenant': 'acme', Authorization: 'Bearer caller-token', cookie: 'c=1' } });
    expect(server.headers).toHaveLength(1);
    const [seen] = server.headers;
    expect(seen?.['x-toolgate-depth']).toBe('3');
    expect(seen?.['x-toolgate-tenant']).toBe('acme');
    expect(seen?.['x-service-key']).toBe('svc-secret');
    expect(seen?.authorization).toBeUndefined();
    expect(seen?.cookie).toBeUndefined();
  });

  it('fails fast while the server is gone and comes back by itself on the same port', async () => {
    const state = createTestState([echoTool]);
    let server = await startHttpTestServer(state);
    const client = track(createUpstreamClient({ service: 'http', kind: 'global-mcp', config: { transport: 'streamable-http', url: server.url, headers: {} }, log, backoff: fast }));
    await client.start();
    expect(client.status().state).toBe('ready');
    await server.close();

    expect((await rejection(client.callTool('echo', { message: 'x' }))).errorType).toBe('UPSTREAM_ERROR');
    expect(client.status().state).not.toBe('ready');
    const whileDown = await rejection(client.callTool('echo', { message: 'x' }));
    expect(whileDown.errorType).toBe('UPSTREAM_ERROR');
    // The last known listing stays: tools do not vanish from a model's pool while the upstream is away.
    expect(client.tools().map((t) => t.name)).toContain('echo');

    server = await startHttpTestServer(state, server.port);
    servers.push(server);
    await vi.waitFor(() => expect(client.status().state).toBe('ready'), { timeout: 5_000 });
    expect((await client.callTool('echo', { message: 'back' })).content).toEqual([{ type: 'text', text: 'Echo: back' }]);
  });

  it('starts down (not throwing) when nothing listens, and reports the error', async () => {
    const gone = await startHttpTestServer(createTestState([]));
    await gone.close();
    const client = track(createUpstreamClient({ service: 'nobody', kind: 'global-mcp', config: { transport: 'streamable-http', url: gone.url, headers: {} }, log, backoff: fast, required: true }));
    await client.start();
    expect(client.status()).toMatchObject({ state: 'down', required: true, toolCount: 0 });
    expect(client.status().lastError).toBeTruthy();
  });

  it('serves many concurrent calls over one HTTP transport without a MaxListenersExceededWarning', { timeout: 90_000 }, async () => {
    const server = await startHttpTestServer(createTestState([echoTool]));
    servers.push(server);
    const client = track(createUpstreamClient({ service: 'http', kind: 'global-mcp', config: { transport: 'streamable-http', url: server.url, headers: {} }, log }));
    await client.start();
    // Every fetch of the transport carries the transport's own long-lived signal; each call has its own.
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name, warning.message, warning.stack ?? '');
    process.on('warning', onWarning);
    try {
      for (let round = 0; round < 10; round += 1) {
        await Promise.all(Array.from({ length: 30 }, (_, index) => client.callTool('echo', { message: String(index) }, { signal: new AbortController().signal })));
      }
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
