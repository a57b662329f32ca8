// URL-mode elicitation for a call that needs the user's connection, in the 2026-07-28 era
// (docs/mcp.md#questions-in-the-modern-era): the SDK v2 client declares `elicitation.url` in its envelope, gets
// `input_required` with a URL-mode elicitation naming the connect URL and a sealed requestState, the browser's part
// of the flow runs against the real authorization server, and the SDK's retry with the state runs the call as the
// user. A client without the capability keeps the tool error carrying the URL, as in the legacy era.
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, signToken } from '../../helpers/build.js';
import { MODERN_VERSION } from '../../helpers/mcp-modern.js';
import { authorize, startListeningStage, type Stage } from './setup.js';

let stage: Stage;
let app: FastifyInstance;
let baseUrl: string;

let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ({ stage, app, baseUrl, close } = await startListeningStage());
});
afterAll(() => close?.());

/** The SDK v2 client of `user` in the modern era; a URL elicitation is "opened" by logging in as `user`. */
async function modernAgent(user: string, capabilities: ClientCapabilities, opened: Array<{ mode?: string; url?: string; message: string }>): Promise<Client> {
  const client = new Client({ name: 'modern-agent', version: '1.0.0' }, { capabilities, versionNegotiation: { mode: 'auto' } });
  if (capabilities.elicitation) {
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { mode?: string; url?: string; message: string };
      opened.push(params);
      if (params.mode !== 'url' || params.url === undefined) return { action: 'decline' };
      const callback = await authorize(params.url, user);
      expect((await app.inject({ url: callback })).statusCode).toBe(200);
      return { action: 'accept' };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(await signToken({ sub: user })) } }));
  expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
  return client;
}

describe('URL-mode elicitation for a missing connection, modern era', () => {
  it('asks a client declaring elicitation.url to open the connect URL as input_required, and its retry runs as the user', async () => {
    const opened: Array<{ mode?: string; url?: string; message: string }> = [];
    const client = await modernAgent('ivy', { elicitation: { url: {} } }, opened);
    try {
      const done = (await client.callTool({ name: 'jira_whoami', arguments: {} })) as CallToolResult;
      expect(done.isError).toBeFalsy();
      expect(JSON.stringify(done.content)).toContain('\\"sub\\":\\"ivy\\"');
      expect(opened).toHaveLength(1);
      expect(opened[0]).toMatchObject({ mode: 'url', message: expect.stringContaining('jira') });
      expect(opened[0]!.message).not.toMatch(/https?:/);
      expect(new URL(opened[0]!.url!).origin).toBe(new URL(stage.as.url).origin);
    } finally {
      await client.close();
    }
  });

  it('keeps the tool error carrying the URL for a client without the capability (none, or form mode only)', async () => {
    for (const [user, capabilities] of [['jack', {}], ['kim', { elicitation: { form: {} } }]] as const) {
      const opened: Array<{ message: string }> = [];
      const client = await modernAgent(user, capabilities, opened);
      try {
        const refused = (await client.callTool({ name: 'jira_whoami', arguments: {} })) as CallToolResult;
        expect(refused.isError).toBe(true);
        const url = (refused._meta as Record<string, string> | undefined)?.['toolgate/authorizationUrl'];
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
        expect(JSON.stringify(refused.content)).toContain(url);
        expect(opened).toEqual([]);
      } finally {
        await client.close();
      }
    }
  });
});
