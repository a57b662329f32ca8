// MCP URL-mode elicitation for a call that needs the user's connection (docs/security-model.md#upstream-identity):
// the SDK's own client declares `elicitation.url`, receives the -32042 error naming the connect URL, the
// browser's part of the flow runs against the real authorization server, the session hears
// `notifications/elicitation/complete`, and the retried call runs as the user. Clients without the capability
// keep the tool error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema, ErrorCode, UrlElicitationRequiredError, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, signToken } from '../../helpers/build.js';
import { authorize, startListeningStage, type Stage } from './setup.js';

let stage: Stage;
let app: FastifyInstance;
let baseUrl: string;

let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ({ stage, app, baseUrl, close } = await startListeningStage());
});
afterAll(() => close?.());

interface Agent {
  client: Client;
  /** elicitationIds of the completion notifications heard so far. */
  completed: string[];
  /** Resolves once a completion for `id` arrives (or after `ms`, with false). */
  heard(id: string, ms: number): Promise<boolean>;
}

async function agent(user: string, capabilities: ClientCapabilities): Promise<Agent> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' }, { capabilities });
  const completed: string[] = [];
  const waiting = new Set<() => void>();
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
    completed.push(notification.params.elicitationId);
    for (const wake of waiting) wake();
  });
  // A client declaring elicitation answers elicitation/create too; toolgate sends none for connections.
  if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'decline' }));
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(await signToken({ sub: user })) } }));
  const heard = (id: string, ms: number): Promise<boolean> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!completed.includes(id)) return;
        clearTimeout(timer);
        waiting.delete(check);
        resolve(true);
      };
      const timer = setTimeout(() => {
        waiting.delete(check);
        resolve(false);
      }, ms);
      waiting.add(check);
      check();
    });
  return { client, completed, heard };
}

async function elicitationOf(client: Client, name: string): Promise<UrlElicitationRequiredError> {
  const error = await client.callTool({ name, arguments: {} }).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(UrlElicitationRequiredError);
  return error as UrlElicitationRequiredError;
}

describe('URL-mode elicitation for a missing connection', () => {
  it('a client declaring elicitation.url gets -32042 with the connect URL, hears the completion, and the retried call runs as the user', async () => {
    const ivy = await agent('ivy', { elicitation: { url: {} } });
    try {
      const error = await elicitationOf(ivy.client, 'jira_whoami');
      expect(error.code).toBe(ErrorCode.UrlElicitationRequired);
      expect(error.elicitations).toHaveLength(1);
      const [elicitation] = error.elicitations;
      expect(elicitation).toMatchObject({ mode: 'url', message: expect.stringContaining('jira') });
      expect(elicitation!.message).not.toMatch(/https?:/);
      expect(new URL(elicitation!.url).origin).toBe(new URL(stage.as.url).origin);
      // The browser's part: log in at the authorization server, which redirects to toolgate's callback.
      const callback = await authorize(elicitation!.url, 'ivy');
      expect((await app.inject({ url: callback })).statusCode).toBe(200);
      expect(await ivy.heard(elicitation!.elicitationId, 5000)).toBe(true);
      const done = await ivy.client.callTool({ name: 'jira_whoami', arguments: {} });
      expect(done.isError).toBeFalsy();
      expect(JSON.stringify(done.content)).toContain('\\"sub\\":\\"ivy\\"');
    } finally {
      await ivy.client.close();
    }
  });

  it('a client without the capability (none, or form mode only) keeps the tool error carrying the URL', async () => {
    for (const [user, capabilities] of [['jack', {}], ['kim', { elicitation: { form: {} } }]] as const) {
      const plain = await agent(user, capabilities);
      try {
        const refused = await plain.client.callTool({ name: 'jira_whoami', arguments: {} });
        expect(refused.isError).toBe(true);
        const url = (refused._meta as Record<string, string> | undefined)?.['toolgate/authorizationUrl'];
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
        expect(JSON.stringify(refused.content)).toContain(url);
      } finally {
        await plain.client.close();
      }
    }
  });

  it('a completion reaches only the sessions elicited for that user and service: another user\'s session hears nothing', async () => {
    const lea = await agent('lea', { elicitation: { url: {} } });
    const max = await agent('max', { elicitation: { url: {} } });
    try {
      const leas = (await elicitationOf(lea.client, 'jira_whoami')).elicitations[0]!;
      const maxs = (await elicitationOf(max.client, 'jira_whoami')).elicitations[0]!;
      expect(leas.elicitationId).not.toBe(maxs.elicitationId);
      // max opens lea's link (a shared or phished URL) and logs in as himself: the flow stays lea's.
      expect((await app.inject({ url: await authorize(leas.url, 'lea') })).statusCode).toBe(200);
      expect(await lea.heard(leas.elicitationId, 5000)).toBe(true);
      // Nothing for max's session (bounded wait: the completion for lea has already been delivered).
      expect(await max.heard(maxs.elicitationId, 300)).toBe(false);
      expect(max.completed).toEqual([]);
      // max still needs his own connection.
      expect((await elicitationOf(max.client, 'jira_whoami')).elicitations[0]!.elicitationId).not.toBe(maxs.elicitationId);
    } finally {
      await lea.client.close();
      await max.client.close();
    }
  });

  it('stays the tool error when the session id is another principal\'s, or the endpoint is stateless', async () => {
    const nia = await agent('nia', { elicitation: { url: {} } });
    try {
      const sessionId = (nia.client.transport as StreamableHTTPClientTransport).sessionId;
      expect(sessionId).toBeDefined();
      // Stateless (no session id): nothing says what the client declared.
      const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'jira_whoami', arguments: {} } };
      const headers = { ...bearer(await signToken({ sub: 'nia' })), accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
      const stateless = await app.inject({ method: 'POST', url: '/mcp', headers, payload: call });
      expect(stateless.json<{ result?: { isError?: boolean } }>().result?.isError).toBe(true);
      // Another user presenting nia's session id finds no session at all.
      const other = await app.inject({ method: 'POST', url: '/mcp', headers: { ...headers, ...bearer(await signToken({ sub: 'oli' })), 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-11-25' }, payload: call });
      expect(other.statusCode).toBe(404);
    } finally {
      await nia.client.close();
    }
  });
});
