// Two third-party MCP clients against a listening toolgate, through their MCP layer only (no model):
// LangChain's `@langchain/mcp-adapters` (MultiServerMCPClient, on the MCP SDK 1.x Client) and OpenAI's
// `MCPServerStreamableHttp` from `@openai/agents-core` (on `@modelcontextprotocol/client` 2.x). Neither
// sends `task` on tools/call (their sources call `callTool` with name and arguments only; the OpenAI one
// refuses a tool listed `taskSupport: "required"` and toolgate lists "optional"), so an approval-gated tool
// gets the plain answer of docs/mcp.md#tasks: a tool error naming the approval, whose result an approver's
// decision puts on `GET /v1/approvals/:id`.
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { MCPServerStreamableHttp } from '@openai/agents-core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig } from '../helpers/governed.js';

let app: FastifyInstance;
let mcpUrl: string;
let alice: string;
let approver: string;

beforeAll(async () => {
  app = await buildTestApp(governedConfig());
  mcpUrl = `${await app.listen({ host: '127.0.0.1', port: 0 })}/mcp`;
  alice = await signToken({ sub: 'alice' });
  approver = await signToken({ sub: 'carol', roles: ['approver'] });
});
afterAll(async () => {
  await app?.close();
});

const approvalIdIn = (text: string): string | undefined => /approvalId ([A-Za-z0-9_-]+)/.exec(text)?.[1];

/** Approves over REST as an approver, then reads the approval as its requester: the result the call would have had. */
async function approveAndRead(approvalId: string): Promise<unknown> {
  const approved = await app.inject({ method: 'POST', url: `/v1/approvals/${approvalId}/approve`, headers: bearer(approver) });
  expect(approved.statusCode).toBe(200);
  const read = await app.inject({ method: 'GET', url: `/v1/approvals/${approvalId}`, headers: bearer(alice) });
  expect(read.statusCode).toBe(200);
  return read.json();
}

describe('LangChain @langchain/mcp-adapters', () => {
  let client: MultiServerMCPClient;
  beforeAll(() => {
    client = new MultiServerMCPClient({ mcpServers: { toolgate: { transport: 'http', url: mcpUrl, headers: bearer(alice) } } });
  });
  afterAll(async () => {
    await client?.close();
  });

  it('loads the tool list; its MCP client sees execution.taskSupport, the LangChain tools do not carry it', async () => {
    const tools = await client.getTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['get_weather', 'create_ticket']));
    expect(JSON.stringify(tools.find((tool) => tool.name === 'create_ticket')?.metadata)).not.toContain('taskSupport');
    const listed = await (await client.getClient('toolgate'))?.listTools();
    expect(listed?.tools.find((tool) => tool.name === 'create_ticket')?.execution).toEqual({ taskSupport: 'optional' });
  });

  it('calls a plain tool and gets its output', async () => {
    const weather = (await client.getTools()).find((tool) => tool.name === 'get_weather');
    const output: unknown = await weather?.invoke({ city: 'Oslo' });
    expect(JSON.stringify(output)).toContain('"tempC\\":21');
  });

  it('gets the fallback for an approval-gated tool (a ToolException naming the approval); approved, GET /v1/approvals/:id has the result', async () => {
    const ticket = (await client.getTools()).find((tool) => tool.name === 'create_ticket');
    const failure: unknown = await ticket?.invoke({ title: 'via-langchain' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    const message = failure instanceof Error ? failure.message : '';
    expect(failure instanceof Error && failure.name).toBe('ToolException');
    expect(message).toContain('needs human approval and has not run yet');
    const approvalId = approvalIdIn(message);
    expect(approvalId).toBeDefined();
    expect(await approveAndRead(approvalId ?? '')).toMatchObject({ status: 'approved', result: { ok: true, output: 'ticket "via-langchain" created for alice' } });
  });
});

describe('OpenAI @openai/agents-core MCPServerStreamableHttp', () => {
  let server: MCPServerStreamableHttp;
  beforeAll(async () => {
    server = new MCPServerStreamableHttp({ url: mcpUrl, name: 'toolgate', requestInit: { headers: bearer(alice) } });
    await server.connect();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists the tools as toolgate sent them in the era it negotiated (2026-07-28: no execution.taskSupport)', async () => {
    const tools = await server.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['get_weather', 'create_ticket']));
    const ticket = tools.find((tool) => tool.name === 'create_ticket');
    // It connects with versionNegotiation 'auto' (SDK v2 client): toolgate answers server/discover, so the
    // modern era is chosen, whose Tool has no `execution` (a call becomes a task by the server's choice).
    expect(ticket && 'execution' in ticket ? ticket.execution : undefined).toBeUndefined();
  });

  it('calls a plain tool and gets its output', async () => {
    const result = await server.callToolResult('get_weather', { city: 'Oslo' });
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.content)).toContain('"tempC\\":21');
  });

  it('gets the fallback for an approval-gated tool (isError, approval id in text and _meta); approved, GET /v1/approvals/:id has the result', async () => {
    const result = await server.callToolResult('create_ticket', { title: 'via-openai' });
    expect(result.isError).toBe(true);
    const text = JSON.stringify(result.content);
    expect(text).toContain('needs human approval and has not run yet');
    const approvalId = approvalIdIn(text);
    expect(approvalId).toBeDefined();
    expect(result._meta?.['toolgate/approvalId']).toBe(approvalId);
    expect(await approveAndRead(approvalId ?? '')).toMatchObject({ status: 'approved', result: { ok: true, output: 'ticket "via-openai" created for alice' } });
  });
});
