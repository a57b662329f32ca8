// Elicitation and sampling relayed from an upstream to the MCP client that made the call: the real
// server-everything (npm) behind a real gateway listener, its trigger tools called by the SDK's Client,
// which answers the relayed requests itself.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../../src/audit/types.js';
import { startEverythingHttp, type SpawnedServer } from '../../fixtures/mcp/spawn-everything.js';
import { bearer, buildTestApp, signToken, testConfig } from '../../helpers/build.js';

let everything: SpawnedServer;
let app: FastifyInstance;
let baseUrl: string;
const audit: AuditEvent[] = [];
const asked: string[] = [];

beforeAll(async () => {
  everything = await startEverythingHttp();
  app = await buildTestApp(
    testConfig({
      mcp: { global: [{ id: 'everything', transport: 'streamable-http', url: everything.url, required: true }] },
      tenants: {
        // The defaults: elicitation relayed, sampling not.
        acme: { mcpServices: ['everything'] },
        globex: { mcpServices: ['everything'], mcp: { relay: { elicitation: false, sampling: true } } },
      },
    }),
  );
  const write = app.audit.write.bind(app.audit);
  app.audit.write = (event) => {
    audit.push(event);
    write(event);
  };
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
}, 60_000);
afterAll(async () => {
  await app?.close();
  await everything?.kill();
});

/** The SDK client of a user of `tenant`, declaring `capabilities` and answering what it is asked. */
async function connect(tenant: string, capabilities: { elicitation?: Record<string, never>; sampling?: Record<string, never> }): Promise<Client> {
  const token = await signToken({ sub: 'alice', tenant });
  const client = new Client({ name: 'relay-test', version: '1.0.0' }, { capabilities });
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(`elicitation:${tenant}:${request.params.message}`);
      return { action: 'accept', content: { name: 'Ada Lovelace', check: true } };
    });
  }
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      asked.push(`sampling:${tenant}`);
      return { role: 'assistant', content: { type: 'text', text: 'a sampled answer' }, model: 'test-model', stopReason: 'endTurn' };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(token) } }));
  return client;
}

const text = (result: CallToolResult): string => result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
const relays = (kind: string) => audit.filter((event) => event.event === 'relay' && event.kind === kind);

describe('elicitation and sampling relayed from server-everything', () => {
  it("relays server-everything's elicitation to the calling client and completes with its answer", async () => {
    const client = await connect('acme', { elicitation: {} });
    const result = (await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('Ada Lovelace');
    expect(asked).toContain('elicitation:acme:Please provide inputs for the following fields:');
    // Audited with kind, service and outcome; never the content.
    const line = relays('elicitation').at(-1);
    expect(line).toMatchObject({ tenant: 'acme', user: 'alice', service: 'everything', outcome: 'relayed' });
    expect(JSON.stringify(line)).not.toContain('Ada');
    await client.close();
  });

  it('relays sampling where the tenant turns it on, and completes with the client’s answer', async () => {
    const client = await connect('globex', { sampling: {} });
    const result = (await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 10 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('a sampled answer');
    expect(relays('sampling').at(-1)).toMatchObject({ tenant: 'globex', outcome: 'relayed' });
    await client.close();
  });

  it('refuses sampling under the default policy: the upstream gets the error, the caller a clear tool error', async () => {
    const before = asked.length;
    const client = await connect('acme', { sampling: {} });
    const result = (await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 10 } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('sampling/createMessage not relayed');
    expect(text(result)).toContain('mcp.relay.sampling is off');
    expect(asked.length).toBe(before);
    expect(relays('sampling').at(-1)).toMatchObject({ tenant: 'acme', outcome: 'refused' });
    await client.close();
  });

  it('refuses elicitation to a client that did not declare the capability', async () => {
    const client = await connect('acme', {});
    const result = (await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('the MCP client did not declare the elicitation capability');
    await client.close();
  });

  it('answers a REST caller with a clear tool error', async () => {
    const token = await signToken({ sub: 'alice', tenant: 'acme' });
    const response = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'trigger-elicitation-request', arguments: {} } });
    const result = response.json();
    expect(result.ok).toBe(false);
    expect(result.output).toContain('elicitation/create not relayed');
    expect(result.output).toContain('a REST caller');
  });
});
