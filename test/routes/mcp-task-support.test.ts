// `mcpServer.tasks.approvalCalls`, seen by the SDK's Client over real HTTP: by default every tool is listed
// `taskSupport: optional`; with `required`, the tools the caller's approval policy holds are listed
// `required`, a call of one without `task` is refused with -32601 before any approval is asked (and
// audited), and with `task` it answers `input_required` as before.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAuditLines } from '../helpers/audit-file.js';
import { bearer, buildTestApp, signToken } from '../helpers/build.js';
import { governedConfig, governedState } from '../helpers/governed.js';

const approvalPolicies = { approval: { tools: ['create_ticket'], expiresMs: 60_000 } };

let plain: FastifyInstance;
let required: FastifyInstance;
let plainUrl: string;
let requiredUrl: string;
let dir: string;
let auditPath: string;
let alice: string;
let approver: string;
let globexAlice: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-task-support-'));
  auditPath = join(dir, 'audit.jsonl');
  plain = await buildTestApp(governedConfig());
  // globex has no approval policy: nothing is held for its callers.
  required = await buildTestApp(
    governedConfig({ audit: { sink: 'file', path: auditPath }, mcpServer: { tasks: { approvalCalls: 'required' } }, tenants: { acme: { policies: approvalPolicies }, globex: {} } }),
  );
  plainUrl = await plain.listen({ host: '127.0.0.1', port: 0 });
  requiredUrl = await required.listen({ host: '127.0.0.1', port: 0 });
  alice = await signToken({ sub: 'alice' });
  approver = await signToken({ sub: 'carol', roles: ['approver'] });
  globexAlice = await signToken({ sub: 'alice', tenant: 'globex' });
});
afterAll(async () => {
  await plain?.close();
  await required?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function connect(baseUrl: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(token) } });
  const client = new Client({ name: 'task-support-test', version: '1.0.0' }, { capabilities: { tasks: { list: {}, cancel: {} } } });
  await client.connect(transport);
  return client;
}

async function taskSupport(baseUrl: string, token: string): Promise<Record<string, string | undefined>> {
  const client = await connect(baseUrl, token);
  const { tools } = await client.listTools();
  await client.close();
  const of = (name: string) => tools.find((tool) => tool.name === name)?.execution?.taskSupport;
  return { create_ticket: of('create_ticket'), slow: of('slow') };
}

const pendingApprovals = async (): Promise<number> =>
  (await required.inject({ method: 'GET', url: '/v1/approvals?status=pending', headers: bearer(approver) })).json<{ approvals: unknown[] }>().approvals.length;

describe('mcpServer.tasks.approvalCalls', () => {
  it('lists every tool optional by default, approval-gated ones included', async () => {
    expect(await taskSupport(plainUrl, alice)).toEqual({ create_ticket: 'optional', slow: 'optional' });
  });

  it("with required, lists the tools the caller's approval policy holds required and the others optional", async () => {
    expect(await taskSupport(requiredUrl, alice)).toEqual({ create_ticket: 'required', slow: 'optional' });
    // The same tool for a caller whose tenant holds nothing for approval.
    expect(await taskSupport(requiredUrl, globexAlice)).toEqual({ create_ticket: 'optional', slow: 'optional' });
  });

  it('refuses a call of a required tool without task with -32601 before asking for approval, and audits the refusal', async () => {
    const client = await connect(requiredUrl, alice);
    const before = await pendingApprovals();
    // A raw request: the SDK's callTool refuses such a call itself once it has listed the tool.
    const refused = await client.request({ method: 'tools/call', params: { name: 'create_ticket', arguments: { title: 'untasked' } } }, CallToolResultSchema).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(ErrorCode.MethodNotFound);
    expect((refused as McpError).message).toMatch(/create_ticket needs human approval and must be called as a task/);
    expect(await pendingApprovals()).toBe(before);
    expect(governedState().executions.filter((e) => e.title === 'untasked')).toHaveLength(0);
    const lines = (await readAuditLines(required, auditPath)).filter((line) => line.event === 'call' && line.tool === 'create_ticket');
    expect(lines).toEqual([expect.objectContaining({ user: 'alice', outcome: 'VALIDATION_ERROR', errorType: 'VALIDATION_ERROR', approvalId: null })]);
    await client.close();
  });

  it('answers a required tool called with task input_required, and runs a tool that needs no approval without one', async () => {
    const client = await connect(requiredUrl, alice);
    const { task } = await client.request({ method: 'tools/call', params: { name: 'create_ticket', arguments: { title: 'tasked' }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
    expect(task.status).toBe('input_required');
    await client.experimental.tasks.cancelTask(task.taskId);
    const result = await client.callTool({ name: 'slow', arguments: { ms: 10 } });
    expect(result.isError).toBeFalsy();
    await client.close();
  });
});
