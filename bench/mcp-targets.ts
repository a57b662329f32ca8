// The servers bench/mcp.ts measures, each run in its own process (so the load generator never shares
// an event loop with the server under test): `floor`, `floor-client`, `floor-eras` or `toolgate`. Prints
// `LISTENING <url>` (the /v1/execute route; `floor-eras` and toolgate serve MCP at /mcp beside it).
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { createMcpHandler, Server, type CallToolResult } from '@modelcontextprotocol/server';
import Fastify, { type FastifyInstance } from 'fastify';
// The gateway under test is the compiled output `npm start` runs (npm run bench builds it first), not the
// TypeScript under tsx: esbuild's keepNames wraps every named closure in a defineProperty call at run time.
// Falls back to the sources when nothing is built (the bench smoke test under a bare `npm test`).
const compiled = new URL('../dist/src/app.js', import.meta.url);
const { buildServer } = (await import(existsSync(compiled) ? compiled.href : '../src/app.js')) as typeof import('../src/app.js');
import { validateConfigObject } from '../src/config/load.js';
import { toToolOutput } from '../src/mcp/client/result.js';
import { createUpstreamClient } from '../src/mcp/client/upstream-client.js';
import { BENCH_API_KEY, BENCH_METRICS_TOKEN } from './mcp-keys.js';
import { silentLogger } from './silent-logger.js';

const root = fileURLToPath(new URL('../', import.meta.url));
export const everythingBin = `${root}node_modules/.bin/mcp-server-everything`;

/** The floor: one SDK stdio client behind the thinnest Fastify route that can call it. */
async function floor(): Promise<FastifyInstance> {
  const client = new Client({ name: 'bench-floor', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: everythingBin, args: ['stdio'], stderr: 'ignore' }));
  const app = Fastify({ logger: false });
  app.post<{ Body: { name: string; arguments: Record<string, unknown> } }>('/v1/execute', async (request) => {
    const result = await client.callTool({ name: request.body.name, arguments: request.body.arguments });
    return { output: (result.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('\n') };
  });
  app.addHook('onClose', () => client.close());
  return app;
}

/** The floor harness with toolgate's own upstream client instead of the bare SDK client: isolates the MCP layer's cost. */
async function floorClient(): Promise<FastifyInstance> {
  const client = createUpstreamClient({ service: 'everything', kind: 'global-mcp', config: { transport: 'stdio', command: everythingBin, args: ['stdio'], env: {} }, log: silentLogger });
  await client.start();
  const app = Fastify({ logger: false });
  app.post<{ Body: { name: string; arguments: Record<string, unknown> } }>('/v1/execute', async (request) => {
    // A signal per call, as toolgate hands the SDK every call's own.
    return toToolOutput(await client.callTool(request.body.name, request.body.arguments, { signal: new AbortController().signal }));
  });
  app.addHook('onClose', () => client.close());
  return app;
}

/**
 * The floor of both MCP eras (bench/mcp-eras.ts): Fastify and the SDK v2 serving entry (2026-07-28 requests
 * statelessly, 2025-era requests through its stateless legacy leg), whose tools/call forwards to one SDK v2
 * client → echo. No auth, no pool, no chain: what an MCP proxy costs at the least.
 */
async function floorEras(): Promise<FastifyInstance> {
  const client = new ClientV2({ name: 'bench-floor-eras', version: '1.0.0' });
  await client.connect(new StdioClientTransportV2({ command: everythingBin, args: ['stdio'], stderr: 'ignore' }));
  const handler = createMcpHandler(
    () => {
      const server = new Server({ name: 'floor', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler('tools/call', async (call) => (await client.callTool({ name: call.params.name, arguments: call.params.arguments ?? {} })) as CallToolResult);
      return server;
    },
    { legacy: 'stateless' },
  );
  const app = Fastify({ logger: false });
  app.post('/mcp', async (request, reply) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers.set(name, value);
    const web = new Request(`http://127.0.0.1${request.url}`, { method: 'POST', headers, body: JSON.stringify(request.body) });
    const response = await handler.fetch(web, { parsedBody: request.body });
    reply.status(response.status);
    response.headers.forEach((value, name) => void reply.header(name, value));
    return reply.send(await response.text());
  });
  app.addHook('onClose', async () => {
    await handler.close();
    await client.close();
  });
  return app;
}

/** toolgate with the everything upstream (also built in process by bench/mcp-eras-cpu.ts). */
export async function toolgate(): Promise<FastifyInstance> {
  const config = validateConfigObject(
    {
      auth: { apiKeys: [{ id: 'bench', sha256: createHash('sha256').update(BENCH_API_KEY).digest('hex'), tenant: 'bench', user: 'bench', roles: [] }] },
      audit: { sink: 'off' },
      logging: { level: 'silent' },
      functions: [{ module: './test/fixtures/functions/basic.mjs' }],
      mcp: { global: [{ id: 'everything', transport: 'stdio', command: everythingBin, args: ['stdio'], required: true }] },
      tenants: { bench: { mcpServices: ['everything'], limits: { maxInFlight: 1024 } } },
      metrics: { enabled: false, token: BENCH_METRICS_TOKEN },
    },
    root,
    undefined,
  );
  return buildServer(config, { logger: false, defaultMetrics: false });
}

const target = process.argv[2];
const factories: Record<string, () => Promise<FastifyInstance>> = { floor, 'floor-client': floorClient, 'floor-eras': floorEras, toolgate };
const factory = target === undefined ? undefined : factories[target];
if (factory) {
  const app = await factory();
  await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`LISTENING http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/execute\n`);
  const stop = (): void => void app.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.stdin.once('end', stop); // the bench went away: never outlive it
  process.stdin.resume();
}
