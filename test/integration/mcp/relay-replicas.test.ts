// The client's answer to a relayed elicitation is a later POST of its session; behind a load balancer it
// may reach another replica than the one whose call waits. Two replicas on one Redis, the real
// server-everything upstream: the answer is routed to replica B, the call runs on replica A.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, signToken } from '../../helpers/build.js';
import { startEverythingReplicas, type EverythingReplicas } from '../../helpers/everything-replicas.js';
import { testRedisUrl } from '../../helpers/redis.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test-relay:${randomBytes(6).toString('hex')}:`;
let replicas: EverythingReplicas | undefined;
let urls: string[] = [];

beforeAll(async () => {
  if (!REDIS_URL) return;
  replicas = await startEverythingReplicas(REDIS_URL, prefix, 2);
  urls = replicas.urls;
}, 60_000);
afterAll(async () => {
  await replicas?.close();
});

describe.skipIf(!REDIS_URL)('the relay on two replicas sharing one Redis', () => {
  it("delivers the client's answer posted to replica B to the call waiting on replica A", async () => {
    const token = await signToken({ sub: 'alice' });
    const routed: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(`${urls[0]}/mcp`), {
      requestInit: { headers: bearer(token) },
      // A load balancer in miniature: answers (JSON-RPC responses) go to replica B, everything else to A.
      fetch: async (url, init) => {
        const body = typeof init?.body === 'string' ? init.body : '';
        const toB = init?.method === 'POST' && body.includes('"result"') && !body.includes('"method"');
        if (toB) routed.push('B');
        return fetch(toB ? String(url).replace(urls[0]!, urls[1]!) : url, init);
      },
    });
    const client = new Client({ name: 'relay-replicas', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace Hopper' } }));
    await client.connect(transport);
    const result = (await client.callTool({ name: 'trigger-elicitation-request', arguments: {} })) as CallToolResult;
    expect(routed).toEqual(['B']);
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain('Grace Hopper');
    await client.close();
  });
});
