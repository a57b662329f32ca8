// Against servers installed from npm: server-everything (stdio and streamable HTTP) and server-filesystem (stdio).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ToolError } from '../../../src/call/tool-error.js';
import { createGlobalMcpProvider } from '../../../src/mcp/client/global-provider.js';
import { createLocalMcpProvider } from '../../../src/mcp/client/local-provider.js';
import type { McpProvider } from '../../../src/mcp/client/mcp-provider.js';
import type { Tool } from '../../../src/call/types.js';
import { silentLog as log, toolContext } from '../../fixtures/mcp/context.js';
import { everythingBin, filesystemBin, startEverythingHttp, type SpawnedServer } from '../../fixtures/mcp/spawn-everything.js';

const providers: McpProvider[] = [];
const spawned: SpawnedServer[] = [];
const tempDir = mkdtempSync(join(tmpdir(), 'toolgate-fs-'));

afterAll(async () => {
  await Promise.all(providers.map((provider) => provider.close?.()));
  await Promise.all(spawned.map((server) => server.kill()));
  rmSync(tempDir, { recursive: true, force: true });
});

async function started(provider: McpProvider): Promise<McpProvider> {
  providers.push(provider);
  await provider.start?.();
  return provider;
}

function tool(provider: McpProvider, name: string): Tool {
  const found = provider.tools().find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no ${name}; status ${JSON.stringify(provider.status())}`);
  return found;
}

async function call(provider: McpProvider, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
  return tool(provider, name).handler(args, toolContext(signal ? { signal } : {}));
}

async function failure(promise: Promise<unknown>): Promise<ToolError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolError);
  return error as ToolError;
}

/** States a provider went through, in order (recorded on every change notification). */
function recordStates(provider: McpProvider): string[] {
  const states: string[] = [];
  provider.onChange?.(() => {
    const state = provider.status()[0]?.state ?? 'none';
    if (states.at(-1) !== state) states.push(state);
  });
  return states;
}

describe.each([
  ['stdio', async () => ({ transport: 'stdio' as const, command: everythingBin, args: ['stdio'], env: {} })],
  [
    'streamable HTTP',
    async () => {
      const server = await startEverythingHttp();
      spawned.push(server);
      return { transport: 'streamable-http' as const, url: server.url, headers: {} };
    },
  ],
])('server-everything over %s', (_label, transport) => {
  let provider: McpProvider;

  it('lists its tools and calls echo and get-sum', async () => {
    const config = await transport();
    provider = await started(createGlobalMcpProvider([{ id: 'everything', required: true, defer: false, pin: true, forwardIdentity: {}, ...config }], { log }));
    expect(provider.status()[0]).toMatchObject({ state: 'ready', required: true });
    expect(provider.tools().map((candidate) => candidate.name)).toEqual(expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']));
    expect(tool(provider, 'echo')).toMatchObject({ readOnly: true, destructive: false, source: 'global-mcp' });
    expect(await call(provider, 'echo', { message: 'hello' })).toEqual({ output: 'Echo: hello', trace: null });
    expect(await call(provider, 'get-sum', { a: 2, b: 3 })).toMatchObject({ output: 'The sum of 2 and 3 is 5.' });
  });

  it('cancels trigger-long-running-operation by AbortSignal timeout and stays usable', async () => {
    const error = await failure(call(provider, 'trigger-long-running-operation', { duration: 30, steps: 3 }, AbortSignal.timeout(300)));
    expect(error.errorType).toBe('TIMEOUT');
    expect(await call(provider, 'echo', { message: 'still here' })).toEqual({ output: 'Echo: still here', trace: null });
  });
});

describe('server-everything over the legacy SSE transport', () => {
  it.each([
    ['declared as sse', 'sse' as const],
    ['declared as streamable-http (falls back to SSE after the 4xx)', 'streamable-http' as const],
  ])('connects and calls echo when %s', async (_label, transport) => {
    const server = await startEverythingHttp(0, 'sse');
    spawned.push(server);
    const provider = await started(createGlobalMcpProvider([{ id: 'old', transport, url: server.url, headers: {}, required: false, defer: false, pin: true, forwardIdentity: {} }], { log }));
    expect(provider.status()[0]).toMatchObject({ state: 'ready', detail: expect.objectContaining({ transport: 'sse' }) });
    expect(await call(provider, 'echo', { message: 'old school' })).toEqual({ output: 'Echo: old school', trace: null });
  });
});

describe('a killed upstream', () => {
  it('stdio: calls answer UPSTREAM_ERROR, status goes down, and the child is respawned by itself', async () => {
    const provider = await started(
      createLocalMcpProvider([{ service: 'everything', transport: 'stdio', command: everythingBin, args: ['stdio'], env: {}, required: true }], {
        log,
        backoff: { initialMs: 400, maxMs: 400 },
      }),
    );
    const states = recordStates(provider);
    const echo = tool(provider, 'everything_echo');
    const pid = provider.status()[0]?.detail?.pid;
    expect(typeof pid).toBe('number');
    process.kill(pid as number, 'SIGKILL');
    await vi.waitFor(() => expect(provider.status()[0]?.state).not.toBe('ready'));
    expect((await failure(Promise.resolve(echo.handler({ message: 'x' }, toolContext())))).errorType).toBe('UPSTREAM_ERROR');
    await vi.waitFor(() => expect(provider.status()[0]?.state).toBe('ready'), { timeout: 10_000 });
    expect(states).toEqual(expect.arrayContaining(['down', 'ready']));
    expect(states.indexOf('down')).toBeLessThan(states.lastIndexOf('ready'));
    expect(provider.status()[0]?.detail?.pid).not.toBe(pid);
    expect(await call(provider, 'everything_echo', { message: 'back' })).toEqual({ output: 'Echo: back', trace: null });
  });

  it('streamable HTTP: calls answer UPSTREAM_ERROR while it is gone and it recovers on the same port', async () => {
    let server = await startEverythingHttp();
    spawned.push(server);
    const provider = await started(
      createGlobalMcpProvider([{ id: 'ev', transport: 'streamable-http', url: server.url, headers: {}, required: true, defer: false, pin: true, forwardIdentity: {} }], {
        log,
        backoff: { initialMs: 50, maxMs: 200 },
      }),
    );
    const echo = tool(provider, 'echo');
    await server.kill();
    expect((await failure(Promise.resolve(echo.handler({ message: 'x' }, toolContext())))).errorType).toBe('UPSTREAM_ERROR');
    await vi.waitFor(() => expect(provider.status()[0]?.state).toBe('down'));
    expect((await failure(Promise.resolve(echo.handler({ message: 'x' }, toolContext())))).errorType).toBe('UPSTREAM_ERROR');
    // The last known listing stays while the upstream is down; calls fail fast instead.
    expect(provider.tools().map((t) => t.name)).toContain('echo');

    server = await startEverythingHttp(server.port);
    spawned.push(server);
    await vi.waitFor(() => expect(provider.status()[0]?.state).toBe('ready'), { timeout: 10_000 });
    expect(await call(provider, 'echo', { message: 'back' })).toEqual({ output: 'Echo: back', trace: null });
  });
});

describe('server-filesystem over stdio', () => {
  it('lists a temp directory and reads a file through local MCP names', async () => {
    writeFileSync(join(tempDir, 'note.txt'), 'hello from disk');
    const provider = await started(createLocalMcpProvider([{ service: 'fs', transport: 'stdio', command: filesystemBin, args: [tempDir], env: {} }], { log }));
    const listing = (await call(provider, 'fs_list_directory', { path: tempDir })) as { output: string };
    expect(listing.output).toContain('[FILE] note.txt');
    const read = (await call(provider, 'fs_read_text_file', { path: join(tempDir, 'note.txt') })) as { output: string; trace: unknown };
    expect(read.output).toBe('hello from disk');
    expect(read.trace).toMatchObject({ structuredContent: { content: 'hello from disk' } });
  });
});
